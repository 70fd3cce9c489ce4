"""Retention: the live store keeps a time horizon (``--retention``) and a size (``--max-db-bytes``); past them,
windows are archived (when ``--archive`` is set), verified, then deleted by the writer in bounded steps.

Two halves, so ingest never waits on the archive:

* the planner thread reads (through its own cursor: DuckDB's MVCC gives it a consistent snapshot while the
  writer commits) the oldest window past the horizon of each table group, writes it to the archive, reads the
  row count back, and only then queues the keys it read for deletion;
* the writer thread, between group commits, calls ``step``: it deletes one batch of the queued keys in one short
  transaction, and when a window is gone runs CHECKPOINT so the freed blocks are reused.

A step is bounded in time, not only in rows: each step is timed and the next batch halves when a step took more
than ``target_step_ms`` (20 ms) and doubles when it took less than half of it (``MIN_BATCH``..``MAX_BATCH``), so
a starved CPU gets small steps and a quiet one large, cheap ones. A step is also cheap at any store size: the
planner queues each row with its ``rowid``, and the delete is bounded by the batch's rowid range, which DuckDB
pushes into the table scan (``EXPLAIN ANALYZE``: ``Filters: rowid >= … AND rowid <= …``, ``Row Groups Scanned:
1 / 41`` on a 5 M-row table, 25 ms instead of 440 ms for a scan by key alone). That matters most for span events
and links, which have no time column whose zone maps could skip row groups: they are queued as their own jobs
(found by their spans' keys on the planner's cursor) and deleted before their window's spans. The rowid is only a
hint: the delete still matches every key, and a batch that finds fewer rows than it was given (rowids moved by a
checkpoint's vacuum) has the planner read the window again.

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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from otel_agent.config import parse_duration
from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.tables import LINEAGE_KEYS, RECORDS, SPAN_CHILDREN, SPANS, TableSpec
from otel_agent.store.database import store_cursor
from otel_agent.store.maintained import has_maintained_state, mark_deleted

if TYPE_CHECKING:
    from otel_agent.lifecycle.iceberg import IcebergMirror

log = logging.getLogger(__name__)

HOUR = dt.timedelta(hours=1)
MIN_BATCH = 256
"""Below this a step costs no less: a delete's fixed part (bind, transaction, commit) is several ms, and 16 rows
took as long as 2,000 under load (measured on this 2-core machine)."""
MAX_BATCH = 65_536
TARGET_STEP_MS = 20.0
"""What one delete step aims to cost on the writer thread (the ingest delay it adds between group commits)."""
CHECKPOINT_ROWS = 100_000
"""Rows deleted between CHECKPOINTs while a backlog drains (one per emptied window cost ~60 ms each at 1,400-span
windows); the planner checkpoints as soon as it has caught up, whatever the count."""


@dataclass
class _Delete:
    """Keys of one archived window of one table (``lc_rowid`` first, sorted by it), deleted a batch at a time."""

    spec: TableSpec
    keys: pa.Table
    window: dt.datetime
    done: int = 0
    steps: int = 0
    max_step_ms: float = 0.0


@dataclass(frozen=True)
class Step:
    """One delete step as it ran: its tables, rows deleted, and milliseconds on the writer thread."""

    tables: tuple[str, ...]
    rows: int
    ms: float


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
    replans: int = 0
    recent_steps: collections.deque[Step] = field(default_factory=lambda: collections.deque(maxlen=512))
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
        target_step_ms: float = TARGET_STEP_MS,
        interval_s: float = 1.0,
    ) -> None:
        self.con = con
        self.retention_s = retention_s
        self.max_db_bytes = max_db_bytes
        self.archive = archive
        self.iceberg = iceberg
        self.batch_rows = batch_rows
        """Rows of the next delete step: starts here, then follows ``target_step_ms``."""
        self.target_step_ms = target_step_ms
        self.interval_s = interval_s
        self.stats = LifecycleStats()
        self._pending: collections.deque[_Delete] = collections.deque()
        self._lock = threading.Lock()
        self._checkpoint_due = False
        self._deleted_since_checkpoint = 0
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
                self._deleted_since_checkpoint = 0
        if checkpoint:
            t0 = time.perf_counter()
            con.execute("CHECKPOINT")
            self.stats.checkpoints += 1
            self.stats.checkpoint_seconds += time.perf_counter() - t0
            return False
        if job is None:
            return False
        t0 = time.perf_counter()
        batch = self.batch_rows
        parts = self._take(batch)
        con.execute("BEGIN")
        try:
            found = []
            maintained = has_maintained_state(con)
            for part_job, part in parts:  # in queue order: a window's children before its spans
                con.register("lc_keys", part)
                if maintained:
                    mark_deleted(con, part_job.spec.table, part)
                found.append(int(con.execute(_delete_sql(part_job.spec, part)).fetchall()[0][0]))
                con.unregister("lc_keys")
            con.execute("COMMIT")
        except BaseException as exc:
            con.execute("ROLLBACK")
            self.stats.errors += 1
            self.stats.last_error = f"delete from {', '.join(j.spec.table for j, _ in parts)}: {exc}"
            log.error("retention: %s", self.stats.last_error)
            with self._lock:
                self._pending.clear()  # the planner reads the window again
            return False
        ms = (time.perf_counter() - t0) * 1000
        rows = sum(part.num_rows for _, part in parts)
        self._record(parts, found, ms)
        if ms > self.target_step_ms:
            self.batch_rows = max(MIN_BATCH, batch // 2)
        elif ms < self.target_step_ms / 2 and rows == batch:
            self.batch_rows = min(MAX_BATCH, batch * 2)
        moved = False
        for (part_job, part), n in zip(parts, found, strict=True):
            part_job.done += part.num_rows
            moved |= n < part.num_rows
        if moved:  # rows not where the planner saw them (a vacuum moved rowids): read the window again
            self.stats.replans += 1
            log.info("retention: rows moved in %s; planning the window again", f"{job.window:%Y-%m-%d %H}h")
            with self._lock:
                self._pending.clear()
            return False
        with self._lock:
            while self._pending and self._pending[0].done >= self._pending[0].keys.num_rows:
                done = self._pending.popleft()
                log.info(
                    "retention: deleted window %s of %s (%d rows in %d steps, slowest %.1f ms)",
                    f"{done.window:%Y-%m-%d %H}h", done.spec.table, done.done, done.steps, done.max_step_ms,
                )  # fmt: skip
            # by size, each window's freed blocks must show before the next is chosen
            big = self._deleted_since_checkpoint >= CHECKPOINT_ROWS or self.max_db_bytes is not None
            if not self._pending and big:
                self._checkpoint_due = True
            return bool(self._pending) or self._checkpoint_due

    def _take(self, batch: int) -> list[tuple[_Delete, pa.Table]]:
        """The next ``batch`` queued keys, across jobs: one step deletes the tail of one table's window and the
        head of the next in one transaction (a step's cost is mostly its fixed part)."""
        parts = []
        with self._lock:
            jobs = list(self._pending)
        for queued in jobs:
            if batch <= 0:
                break
            part = queued.keys.slice(queued.done, batch)
            if part.num_rows:
                parts.append((queued, part))
                batch -= part.num_rows
        return parts

    def _record(self, parts: list[tuple[_Delete, pa.Table]], found: list[int], ms: float) -> None:
        s = self.stats
        for (job, _), n in zip(parts, found, strict=True):
            s.rows_deleted[job.spec.table] += n
            self._deleted_since_checkpoint += n
            job.steps += 1
            job.max_step_ms = max(job.max_step_ms, ms)
        s.delete_steps += 1
        s.delete_seconds += ms / 1000
        s.max_step_ms = max(s.max_step_ms, ms)
        s.recent_steps.append(Step(tuple(job.spec.table for job, _ in parts), sum(found), ms))

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
            "delete_step_target_ms": self.target_step_ms,
            "delete_batch_rows": self.batch_rows,
            "delete_replans": s.replans,
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
        with store_cursor(self.con) as cur:
            horizon = self.horizon(cur)
            deleting = horizon is not None
            if horizon is None:  # archive only: every closed window, once per run
                horizon = _window_of(dt.datetime.now(dt.UTC).replace(tzinfo=None))
            found = False
            for spec in (SPANS, LINEAGE_KEYS, *RECORDS):
                found |= self._plan_table(cur, spec, horizon, deleting)
            if not found:  # caught up: reuse what was freed
                with self._lock:
                    if self._deleted_since_checkpoint and not self._pending:
                        self._checkpoint_due = True
            return found

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
        window = f"{spec.time} >= $s AND {spec.time} < $e"
        bounds = {"s": start, "e": end}
        rows = cur.sql(f"SELECT rowid AS lc_rowid, * FROM {spec.table} WHERE {window} ORDER BY rowid", params=bounds)
        rows = rows.to_arrow_table()
        children: list[tuple[TableSpec, pa.Table]] = []
        if spec is SPANS:  # a window's spans are archived and deleted only with all they carry
            cur.register("lc_window", rows.select(["trace_id", "span_id"]))
            for child in SPAN_CHILDREN:
                cols = "c.*" if self.archive is not None else ", ".join(f"c.{k}" for k in child.keys)
                bound = f" WHERE c.{window}" if child.time else ""
                child_rows = cur.sql(
                    f"SELECT c.rowid AS lc_rowid, {cols} FROM {child.table} c "
                    f"SEMI JOIN lc_window w USING (trace_id, span_id){bound} ORDER BY c.rowid",
                    params=bounds if child.time else None,
                ).to_arrow_table()
                children.append((child, child_rows))
            cur.unregister("lc_window")
        if self.archive is not None:
            t0 = time.perf_counter()
            for child, child_rows in children:  # children first: archived spans always have theirs
                self._archive(child, start, _archived_columns(child_rows))
            self._archive(spec, start, _archived_columns(rows))
            self.stats.windows_archived += 1
            if self.on_archived is not None:
                try:
                    self.on_archived()
                except duckdb.Error:  # the readers keep the views they had; the next window tries again
                    log.exception("archive: refreshing the live ∪ archive views failed")
            self.stats.archive_seconds += time.perf_counter() - t0
            log.info("archive: window %s of %s verified (%d rows)", f"{start:%Y-%m-%d %H}h", spec.table, rows.num_rows)
        if deleting:
            jobs = [(child, child_rows) for child, child_rows in children if child_rows.num_rows]
            jobs.append((spec, rows))  # children before their spans: a span is never deleted before its events
            with self._lock:
                for table_spec, table_rows in jobs:
                    keys = table_rows.select(["lc_rowid", *table_spec.keys])
                    self._pending.append(_Delete(table_spec, keys, start))
        else:
            self._archived_through[spec.table] = end
        return True

    def _archive(self, spec: TableSpec, start: dt.datetime, rows: pa.Table) -> None:
        assert self.archive is not None
        if rows.num_rows == 0:  # nothing to write, list or register (most windows have no links, for one)
            return
        result = self.archive.write_window(spec, start, rows)
        if not result.already_archived:
            self.stats.files_written += 1
            self.stats.rows_archived += result.rows_written
            self.stats.bytes_archived += result.bytes_written
        if self.iceberg is not None:  # after the Parquet is verified; catches up on files a crash left out
            self.stats.iceberg_appends += self.iceberg.sync_window(self.archive, spec.signal, start)


def _archived_columns(rows: pa.Table) -> pa.Table:
    """The rows as the archive keeps them: without the planner's rowid and the store's own ``ingest_seq`` (which
    group commit stored a row says nothing about the telemetry, and differs between stores)."""
    return rows.drop_columns([c for c in ("lc_rowid", "ingest_seq") if c in rows.column_names])


def _delete_sql(spec: TableSpec, part: pa.Table) -> str:
    """The DELETE of the rows of ``spec.table`` listed in ``lc_keys`` (= ``part``, sorted by ``lc_rowid``). The
    literal rowid range is pushed into the table scan, so only the row groups holding the batch are read; the key
    match keeps the delete exact whatever the rowids became."""
    table = spec.table
    lo, hi = int(part["lc_rowid"][0].as_py()), int(part["lc_rowid"][-1].as_py())
    match = " AND ".join(f'{table}."{k}" IS NOT DISTINCT FROM k."{k}"' for k in spec.keys)
    return (
        f"DELETE FROM {table} USING lc_keys k WHERE {table}.rowid BETWEEN {lo} AND {hi} "
        f"AND {table}.rowid = k.lc_rowid AND {match}"
    )


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
