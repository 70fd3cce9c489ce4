"""Retention: the live store keeps a time horizon (``--retention``) and a size (``--max-db-bytes``); past them,
windows are archived (when ``--archive`` is set), verified, then deleted by the writer in bounded steps.

Two halves, so ingest never waits on the archive:

* the planner thread reads (through its own cursor: DuckDB's MVCC gives it a consistent snapshot while the
  writer commits) the oldest window past the horizon of each table group, writes it to the archive, reads the
  row count back, and only then queues the keys it read for deletion;
* the writer thread, between group commits, calls ``step``: it deletes at most ``batch_rows`` of the queued keys
  in one short transaction (a few ms), and when a window is gone runs CHECKPOINT so the freed blocks are reused.

Deletion is by the keys that were archived, never by a time range, so a row that arrives for a window after it
was read is kept (and archived with the window's next pass). A crash anywhere loses nothing: rows are deleted
only after the archive holds them, and an archive written twice adds nothing (``archive.py``). The product's own
tables (reviews, trusted_writers) are never touched; review and lineage rows left pointing at deleted spans are
listed by the ``dangling_references`` view (store/views/evidence/120_dangling_references.sql).
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from otel_agent.errors import ConfigError
from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.tables import LINEAGE_KEYS, RECORDS, SPAN_CHILDREN, SPANS, TableSpec
from otel_agent.store.database import store_cursor

if TYPE_CHECKING:
    from otel_agent.lifecycle.iceberg import IcebergMirror

log = logging.getLogger(__name__)

HOUR = dt.timedelta(hours=1)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``1w`` or a number of seconds → seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text or "")
    if not match:
        raise ConfigError(f"retention {text!r}: expected a duration such as 7d, 12h, 30m or 90s")
    return float(match[1]) * _UNITS[match[2] or "s"]


@dataclass
class _Delete:
    """Keys of one archived window of one table, deleted ``batch_rows`` at a time."""

    spec: TableSpec
    keys: pa.Table
    window: dt.datetime
    done: int = 0


@dataclass
class LifecycleStats:
    windows_archived: int = 0
    files_written: int = 0
    rows_archived: int = 0
    bytes_archived: int = 0
    archive_seconds: float = 0.0
    rows_deleted: dict[str, int] = field(default_factory=collections.Counter)
    delete_steps: int = 0
    delete_seconds: float = 0.0
    max_step_ms: float = 0.0
    checkpoints: int = 0
    checkpoint_seconds: float = 0.0
    iceberg_appends: int = 0
    errors: int = 0
    last_error: str | None = None
    horizon: str | None = None


class Lifecycle:
    """Retention and archive of one live store, driven by the writer (``step``) and its own planner thread."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        retention_s: float | None,
        max_db_bytes: int | None = None,
        archive: Archive | None = None,
        iceberg: IcebergMirror | None = None,
        batch_rows: int = 500,
        interval_s: float = 1.0,
    ) -> None:
        self.con = con
        self.retention_s = retention_s
        self.max_db_bytes = max_db_bytes
        self.archive = archive
        self.iceberg = iceberg
        self.batch_rows = batch_rows
        self.interval_s = interval_s
        self.stats = LifecycleStats()
        self._pending: collections.deque[_Delete] = collections.deque()
        self._lock = threading.Lock()
        self._checkpoint_due = False
        self._archived_through: dict[str, dt.datetime] = {}  # archive without retention: windows done this run
        self._stop = threading.Event()
        self.on_archived: Callable[[], None] | None = None  # after each archived window (the readers' views)
        self._thread = threading.Thread(target=self._plan_loop, name="otel-agent-lifecycle", daemon=True)

    @property
    def enabled(self) -> bool:
        return self.retention_s is not None or self.max_db_bytes is not None or self.archive is not None

    def start(self) -> Lifecycle:
        if self.enabled:
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    # -- the writer's half -----------------------------------------------------------------------------
    def step(self, con: duckdb.DuckDBPyConnection) -> bool:
        """One bounded piece of deletion on the writer thread; True when more is queued."""
        with self._lock:
            job = self._pending[0] if self._pending else None
            checkpoint = self._checkpoint_due and job is None
            self._checkpoint_due = False if checkpoint else self._checkpoint_due
        if checkpoint:
            t0 = time.perf_counter()
            con.execute("CHECKPOINT")
            self.stats.checkpoints += 1
            self.stats.checkpoint_seconds += time.perf_counter() - t0
            return False
        if job is None:
            return False
        t0 = time.perf_counter()
        part = job.keys.slice(job.done, self.batch_rows)
        con.execute("BEGIN")
        try:
            con.register("lc_keys", part)
            if job.spec is SPANS:
                for child in SPAN_CHILDREN:
                    n = _delete(con, child.table, ("trace_id", "span_id"), None)
                    self.stats.rows_deleted[child.table] += n
            n = _delete(con, job.spec.table, job.spec.keys, job.spec.time)
            con.unregister("lc_keys")
            con.execute("COMMIT")
        except BaseException as exc:
            con.execute("ROLLBACK")
            self.stats.errors += 1
            self.stats.last_error = f"delete from {job.spec.table}: {exc}"
            log.error("retention: %s", self.stats.last_error)
            with self._lock:
                self._pending.clear()  # the planner reads the window again
            return False
        self.stats.rows_deleted[job.spec.table] += n
        job.done += part.num_rows
        elapsed = time.perf_counter() - t0
        self.stats.delete_steps += 1
        self.stats.delete_seconds += elapsed
        self.stats.max_step_ms = max(self.stats.max_step_ms, elapsed * 1000)
        if job.done >= job.keys.num_rows:
            with self._lock:
                self._pending.popleft()
                if not self._pending:
                    self._checkpoint_due = True
            log.info(
                "retention: deleted window %s of %s (%d rows)", f"{job.window:%Y-%m-%d %H}h", job.spec.table, job.done
            )
        return True

    def report(self) -> dict[str, Any]:
        """What /healthz shows."""
        s = self.stats
        with self._lock:
            pending = sum(j.keys.num_rows - j.done for j in self._pending)
        return {
            "retention_s": self.retention_s,
            "max_db_bytes": self.max_db_bytes,
            "archive": self.archive.uri if self.archive else None,
            "horizon": s.horizon,
            "windows_archived": s.windows_archived,
            "archive_files_written": s.files_written,
            "rows_archived": s.rows_archived,
            "archive_bytes_written": s.bytes_archived,
            "archive_seconds": round(s.archive_seconds, 3),
            "rows_deleted": dict(s.rows_deleted),
            "rows_pending_delete": pending,
            "delete_steps": s.delete_steps,
            "delete_seconds": round(s.delete_seconds, 3),
            "max_delete_step_ms": round(s.max_step_ms, 2),
            "checkpoints": s.checkpoints,
            "checkpoint_seconds": round(s.checkpoint_seconds, 3),
            "iceberg_appends": s.iceberg_appends,
            "errors": s.errors,
            "last_error": s.last_error,
        }

    # -- the planner's half ----------------------------------------------------------------------------
    def _plan_loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                busy = bool(self._pending) or self._checkpoint_due
            if busy:
                continue
            try:
                self.plan_once()
            except Exception as exc:  # the archive may be unreachable for a while: retried next interval
                self.stats.errors += 1
                self.stats.last_error = str(exc)
                log.warning("retention/archive: %s (retrying)", exc)

    def horizon(self, cur: duckdb.DuckDBPyConnection) -> dt.datetime | None:
        """Rows of windows ending at or before this time leave the live store (None: nothing is due)."""
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        horizon = now - dt.timedelta(seconds=self.retention_s) if self.retention_s is not None else None
        if self.max_db_bytes is not None and _used_bytes(cur) > self.max_db_bytes:
            times = [_oldest(cur, spec.table, spec.time) for spec in (SPANS, LINEAGE_KEYS, *RECORDS) if spec.time]
            oldest = min((t for t in times if t is not None), default=None)
            if oldest is not None:  # over the size: the oldest window goes, whatever its age
                end = _window_of(oldest) + HOUR
                horizon = end if horizon is None else max(horizon, end)
        self.stats.horizon = horizon.isoformat() if horizon else None
        return horizon

    def plan_once(self) -> bool:
        """Archive (and queue for deletion) the oldest due window of each table group; True if one was found."""
        cur = store_cursor(self.con)
        try:
            horizon = self.horizon(cur)
            deleting = horizon is not None
            if horizon is None:  # archive only: every closed window, once per run
                horizon = _window_of(dt.datetime.now(dt.UTC).replace(tzinfo=None))
            found = False
            for spec in (SPANS, LINEAGE_KEYS, *RECORDS):
                found |= self._plan_table(cur, spec, horizon, deleting)
            return found
        finally:
            cur.close()

    def _plan_table(
        self, cur: duckdb.DuckDBPyConnection, spec: TableSpec, horizon: dt.datetime, deleting: bool
    ) -> bool:
        assert spec.time is not None
        after = None if deleting else self._archived_through.get(spec.table)
        oldest = _oldest(cur, spec.table, spec.time, after)
        if oldest is None:
            return False
        start = _window_of(oldest)
        end = start + HOUR
        if end > horizon:
            return False
        rows = cur.sql(
            f"SELECT * FROM {spec.table} WHERE {spec.time} >= $s AND {spec.time} < $e", params={"s": start, "e": end}
        ).to_arrow_table()
        if self.archive is not None:
            t0 = time.perf_counter()
            if spec is SPANS:  # children first: a window's spans are archived only with all they carry
                cur.register("lc_window", rows.select(["trace_id", "span_id"]))
                for child in SPAN_CHILDREN:
                    child_rows = cur.sql(
                        f"SELECT c.* FROM {child.table} c SEMI JOIN lc_window w USING (trace_id, span_id)"
                    ).to_arrow_table()
                    self._archive(child, start, child_rows)
                cur.unregister("lc_window")
            self._archive(spec, start, rows)
            self.stats.windows_archived += 1
            if self.on_archived is not None:
                try:
                    self.on_archived()
                except duckdb.Error:  # the readers keep the views they had; the next window tries again
                    log.exception("archive: refreshing the live ∪ archive views failed")
            self.stats.archive_seconds += time.perf_counter() - t0
            log.info("archive: window %s of %s verified (%d rows)", f"{start:%Y-%m-%d %H}h", spec.table, rows.num_rows)
        if deleting:
            with self._lock:
                self._pending.append(_Delete(spec, rows.select(list(spec.keys)), start))
        else:
            self._archived_through[spec.table] = end
        return True

    def _archive(self, spec: TableSpec, start: dt.datetime, rows: pa.Table) -> None:
        assert self.archive is not None
        result = self.archive.write_window(spec, start, rows)
        if not result.already_archived:
            self.stats.files_written += 1
            self.stats.rows_archived += result.rows_written
            self.stats.bytes_archived += result.bytes_written
        if self.iceberg is not None:  # after the Parquet is verified; catches up on files a crash left out
            self.stats.iceberg_appends += self.iceberg.sync_window(self.archive, spec.signal, start)


def _delete(con: duckdb.DuckDBPyConnection, table: str, keys: tuple[str, ...], time_col: str | None) -> int:
    """Delete the rows of ``table`` matching ``lc_keys`` on ``keys``; the time range of the keys lets the
    table's zone maps skip every row group outside it."""
    match = " AND ".join(f'{table}."{k}" IS NOT DISTINCT FROM k."{k}"' for k in keys)
    if time_col is not None:
        bounds = f"(SELECT min({time_col}) FROM lc_keys) AND (SELECT max({time_col}) FROM lc_keys)"
        match += f" AND {table}.{time_col} BETWEEN {bounds}"
    return int(con.execute(f"DELETE FROM {table} USING lc_keys k WHERE {match}").fetchall()[0][0])


def _window_of(t: dt.datetime) -> dt.datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def _oldest(
    cur: duckdb.DuckDBPyConnection, table: str, col: str, after: dt.datetime | None = None
) -> dt.datetime | None:
    where = f"WHERE {col} >= $a" if after is not None else ""
    rows = cur.execute(f"SELECT min({col})::TIMESTAMP FROM {table} {where}", {"a": after} if after else {}).fetchall()
    return rows[0][0] if rows else None


def _used_bytes(cur: duckdb.DuckDBPyConnection) -> int:
    """Bytes of the store's blocks in use plus its WAL (free blocks are reused, so the file's size is not the
    measure; data not yet checkpointed is only in the WAL)."""
    rows = cur.execute(
        "SELECT used_blocks * block_size, (SELECT path FROM duckdb_databases() WHERE database_name = d.database_name) "
        "FROM pragma_database_size() d WHERE database_name = current_database()"
    ).fetchall()
    if not rows:
        return 0
    used, path = rows[0]
    wal = Path(f"{path}.wal") if path else None
    return int(used or 0) + (wal.stat().st_size if wal is not None and wal.exists() else 0)


def make_lifecycle(con: duckdb.DuckDBPyConnection, config: Any) -> Lifecycle:
    """The receiver's lifecycle from its settings (``enabled`` is False when none of them is set)."""
    archive = Archive(config.archive) if config.archive else None
    iceberg = None
    if archive is not None:
        from otel_agent.lifecycle.iceberg import default_catalog  # pyiceberg only when archiving

        iceberg = default_catalog(archive, config.iceberg_catalog)
    return Lifecycle(
        con,
        retention_s=parse_duration(config.retention) if config.retention is not None else None,
        max_db_bytes=config.max_db_bytes,
        archive=archive,
        iceberg=iceberg,
    )
