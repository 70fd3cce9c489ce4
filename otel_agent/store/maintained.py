"""Derived state kept as data arrives: the rows of the ``runs`` view, maintained by a thread of the receiver (or
the embedded exporter) beside the writer, so that listing runs costs what the answer costs instead of deriving
every run from raw JSON spans.

Raw spans stay the source of truth. What is kept here is exactly what the query-time SQL computes, because it *is*
the query-time SQL run over fewer rows: each step takes the group commits that arrived since the last step
(``ingest_seq`` past the watermark), finds the traces they touched, and runs the run views' own SQL
(``oa_classified`` → ``oa_run_rows``, views/runs/) over every raw row of those traces and of the other traces of
the runs they hold — the raw tables shadowed on the thread's own cursor by TEMP tables of the same names holding
just those rows. A run's row depends only on the rows of the traces that hold its spans (and the context-less
exception log records that name its calls, matched within an hour: 030_classified.sql), so replacing the touched
runs' rows keeps ``run_summary`` equal to ``runs_for_run(NULL)`` whatever order or time spans arrive in, re-sent
or late (the differential test, tests/store/test_maintained.py, checks it). Retention's deletes mark their
traces (``dirty_traces``) for the same treatment.

Cost: a step reads the new commits' rows (zone maps on ``ingest_seq`` prune to the newest row groups), the
touched traces' other commits (``trace_commits``, hashed trace ids: a narrow scan), and replaces rows keyed by
hashed ids; it does not grow with the rows a trace does not have. Most of a step is DuckDB *planning* the run
views' SQL (a few hundred ms, whatever the rows), so a step runs on its own thread and cursor, not on the writer's
(DuckDB's MVCC: it reads a snapshot, writes only the state's tables, and commits beside the writer's group commits
without conflict), bounded (``step_rows``) and spaced so it takes about ``share`` of a core. The state may lag the
raw tables by a step or two, reported under ``derived`` in /healthz (``lag_s``, ``backlog_rows``).
Acknowledgements are unchanged: a reply still means the raw rows committed; a kill -9 loses no state that raw
rows do not give back (the watermark commits with the rows it covers, and the next start continues from it).

The state belongs to this release's derived SQL and price table (``maintained_fingerprint``): when either
changes, the state is dropped and built again from raw in bounded steps, and until it has caught up ``runs``
computes from raw (a correct answer, as before, only slower; ``derived.ready`` in /healthz says which). Shards
read as one and live ∪ archive catalogs never use it (their runs span files the state does not cover).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from otel_agent.store.database import derived_fingerprint, setting_bytes, store_cursor
from otel_agent.store.readers import readers_of
from otel_agent.store.statements import statement

log = logging.getLogger(__name__)

SEQ_KEY = "maintained_seq"
"""``otel_agent_meta`` key: every row with ``ingest_seq`` up to this value is folded into the state."""
FINGERPRINT_KEY = "maintained_fingerprint"
"""``otel_agent_meta`` key: the ``maintained_fingerprint`` the state was built with."""
STATE_TABLES = (
    "trace_commits",
    "run_traces",
    "dirty_traces",
    "run_summary",
    "health_facts",
    "receipt_candidates",
    "proxy_facts",
    "run_proxy_metrics",
)

_STEP_TABLES = (
    "_m_new",
    "_m_loose_logs",
    "_m_dirty",
    "_m_scope_traces",
    "_m_seqs",
    "_m_cls",
    "_m_runs_touched",
    "_m_extra",
    "_m_rows",
    "_m_norm",
    "_m_priced",
)
"""The TEMP tables of a step (maintenance/step_*.sql): they go with the step's cursor."""

_PROXY_CANDIDATES = (
    "SELECT count(*) FROM spans WHERE CAST(attributes AS VARCHAR) LIKE '%\"proxy_request\"%' "
    "OR name IN ('Received Proxy Server Request', 'litellm_request')"
)
"""The scope's spans that oa_proxy_fields (views/runs/065_proxy.sql) may keep: its own filter, on the TEMP spans."""

STEP_ROWS = 100_000
"""Raw rows (spans, events, logs) one step folds at most (more when a single commit holds more). A step costs a
fixed few hundred ms of planning plus its rows: on 2 loaded cores 5,000 rows a step folded 2,100 spans/s,
50,000 rows 6,300 spans/s (2026-12-06)."""
STEP_BYTES_PER_ROW = 8_192
"""Memory limit bytes per row a step may fold (see ``step``)."""
MIN_STEP_ROWS = 2_000
"""The smallest ``step_rows`` a step that ran out of memory falls back to (a quarter at a time)."""
POLL_S = 0.25
"""How often the thread looks for new commits (a zone-map-pruned count: ~1 ms)."""
SHARE = 0.2
"""The part of a core maintenance aims to take while ingest is busy: after a step of d seconds the next waits at
least d × (1 − share) / share."""
IDLE_SHARE = 0.9
"""The same while the writer has nothing queued."""
FRESH_S = 1.0
"""How long a stored row may wait for a step before the thread folds it in sooner than ``share`` allows (up to
``MAX_SHARE``): so that a run is listed about this long plus a step after its commit, also under full ingest.
A step costs a fixed ~0.3 s of planning plus ~26 µs a row (2026-12-06, a quiet core), so a step every
``FRESH_S`` folds what arrived meanwhile in one go: at 8,000 spans/s about 0.5 s of every 1.5 s."""
MAX_SHARE = 0.5
"""The most of a core the thread takes to keep ``FRESH_S`` while ingest is busy: past it the lag grows (and is
reported) rather than ingest slowing further."""
YIELD_TO_RECYCLE_S = 5.0
"""How long the thread holds off at most while the writer waits to re-attach the store (store/recycle.py): a step
holds a cursor for seconds, and the writer never waits for one, so without this it could rarely find the store
free."""
FINISH_S = 10.0
"""How long a stopping writer folds in what is left (``DerivedState.finish``)."""
ERROR_BACKOFF_S = 5.0
"""How long the thread waits after a failed step before it tries again."""


def maintained_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """The derived SQL's fingerprint with the maintained SQL and the price table ``con`` holds now (a user price
    file changes what the state holds)."""
    digest = hashlib.sha256(derived_fingerprint().encode())
    scripts = ("state", "runs_view", "scoped_spans", "query_time_views", "step_dirty", "step_scope", "step_apply")
    for name in (*scripts, "step_proxy"):
        digest.update(statement(f"maintenance/{name}").encode())
    prices = con.execute("SELECT * FROM price_table ORDER BY ALL").fetchall()
    digest.update(repr(prices).encode())
    return "sha256:" + digest.hexdigest()


def _script(name: str, catalog: str) -> str:
    return statement(f"maintenance/{name}").replace("oa_store.", f'"{catalog}".main.')


def _meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    rows = con.execute("SELECT value FROM otel_agent_meta WHERE key = ?", [key]).fetchall()
    return rows[0][0] if rows else None


def _set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("DELETE FROM otel_agent_meta WHERE key = ?", [key])
    con.execute("INSERT INTO otel_agent_meta VALUES (?, ?)", [key, value])


def _has_state(con: duckdb.DuckDBPyConnection) -> bool:
    sql = "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name = current_database()"
    return set(STATE_TABLES) <= {r[0] for r in con.execute(sql).fetchall()}


def has_maintained_state(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store ``con`` has by default holds the maintained state's tables."""
    return _has_state(con)


def mark_deleted(con: duckdb.DuckDBPyConnection, table: str, keys: Any) -> None:
    """Before retention deletes the rows of ``table`` listed in the relation ``lc_keys`` it registered (``keys``,
    Arrow: ``lc_rowid`` and the table's keys, sorted by rowid), in the same transaction: mark the traces whose runs
    the deletion changes (maintenance/mark_deleted_*.sql)."""
    if keys.num_rows == 0:
        return
    if table in ("spans", "span_events"):
        con.execute(statement("maintenance/mark_deleted_spans"))
    elif table == "logs":
        con.execute("SET VARIABLE oa_lo_rowid = ?", [int(keys["lc_rowid"][0].as_py())])
        con.execute("SET VARIABLE oa_hi_rowid = ?", [int(keys["lc_rowid"][-1].as_py())])
        con.execute(statement("maintenance/mark_deleted_logs"))


def reads_maintained_runs(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the ``runs`` view of the store ``con`` has by default reads the maintained rows."""
    sql = "SELECT sql FROM duckdb_views() WHERE view_name = 'runs' AND database_name = current_database()"
    view = con.execute(sql).fetchall()
    return bool(view) and "run_summary" in view[0][0]


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the state of the store ``con`` has by default covers every stored row with this release's SQL
    (a reader of a file no writer holds uses the maintained runs only then: store/shards.py)."""
    if not _has_state(con) or _meta(con, FINGERPRINT_KEY) != maintained_fingerprint(con):
        return False
    seq = int(_meta(con, SEQ_KEY) or 0)
    con.execute("SET VARIABLE oa_lo = ?", [seq])
    catalog = str(con.execute("SELECT current_database()").fetchall()[0][0])
    marked = con.execute("SELECT count(*) FROM dirty_traces").fetchall()[0][0]
    return not marked and not con.execute(_script("backlog", catalog)).fetchall()


@dataclass
class DerivedStats:
    """What /healthz shows under ``derived``."""

    ready: bool = False
    """The runs view reads the maintained rows (else it computes from raw: being built, or turned off)."""
    seq: int = 0
    backlog_rows: int = 0
    backlog_commits: int = 0
    lag_s: float = 0.0
    steps: int = 0
    rows_folded: int = 0
    traces_folded: int = 0
    runs_written: int = 0
    rebuilds: int = 0
    step_seconds: float = 0.0
    max_step_ms: float = 0.0
    errors: int = 0
    last_error: str | None = None
    recent_step_ms: list[float] = field(default_factory=list)


class DerivedState:
    """The thread that keeps the maintained state of the store ``con`` holds (``start``/``close``), or, without
    the thread, ``catch_up`` for a caller that folds everything at once (the embedded exporter's shutdown)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        step_rows: int = STEP_ROWS,
        poll_s: float = POLL_S,
        share: float = SHARE,
        fresh_s: float = FRESH_S,
        busy: Callable[[], bool] = lambda: True,
    ) -> None:
        """``busy``: whether ingest is waiting for the writer now (the receiver: requests queued); while it is
        not, steps follow each other (``IDLE_SHARE``), so the state catches up between bursts."""
        self.con = con
        self.step_rows = step_rows
        self.poll_s = poll_s
        self.share = share
        self.fresh_s = fresh_s
        self.busy = busy
        self.stats = DerivedStats()
        self._prepared = False
        self._last_step_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="otel-agent-derived", daemon=True)

    @property
    def started(self) -> bool:
        """Whether the thread was started (a receiver that failed to start never starts it)."""
        return self._thread.ident is not None

    def start(self) -> DerivedState:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread after its current step (a step cut short commits nothing: the next start redoes it)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def catch_up(self, max_steps: int = 1_000_000) -> None:
        """Fold every committed row in, step by step, on the caller's thread (the thread must not run)."""
        for _ in range(max_steps):
            if not self.step():
                return

    def finish(self, within_s: float = FINISH_S) -> None:
        """At a writer's stop, after ``close``: fold in what is left for at most ``within_s``; when that is not
        enough, the file's runs view computes from raw again, so that whoever opens the file next (DuckDB alone
        included) reads complete runs; the next writer continues the state from its watermark."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if not self.step():
                return
        with store_cursor(self.con) as cur:
            cur.execute("BEGIN")
            try:
                cur.execute(statement("maintenance/query_time_views"))
                cur.execute(statement("views/runs/span_fields"))  # the query-time oa_scoped_spans
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        self.stats.ready = False
        log.info(
            "maintained state: %d rows not folded in at stop; the runs view reads raw until it has",
            self.stats.backlog_rows,
        )

    def _run(self) -> None:
        held_off = 0.0
        while not self._stop.is_set():
            if readers_of(self.con).wanted and held_off < YIELD_TO_RECYCLE_S:  # the writer wants the store alone
                held_off += self.poll_s
                self._stop.wait(self.poll_s)
                continue
            held_off = 0.0
            try:
                more = self.step()
            except Exception as exc:  # never let the thread die: log, back off, try again
                self.stats.errors += 1
                self.stats.last_error = str(exc)
                log.error("maintained state: a step failed: %s", exc)
                if isinstance(exc, duckdb.OutOfMemoryException) and self.step_rows > MIN_STEP_ROWS:
                    # the step's copies did not fit beside the writer in DuckDB's memory limit: smaller steps (the
                    # writer's commits share that limit, and a commit that cannot get memory is refused)
                    self.step_rows = max(MIN_STEP_ROWS, self.step_rows // 4)
                    log.warning("maintained state: steps of at most %d rows from now on", self.step_rows)
                self._stop.wait(ERROR_BACKOFF_S)
                continue
            self._pace(more)

    def _pace(self, more: bool) -> None:
        """Wait before the next step: what ``share`` of a core allows after the last step, cut short (down to what
        ``MAX_SHARE`` allows) as soon as a stored row has waited ``FRESH_S`` for a step."""
        share = self.share if self.busy() else IDLE_SHARE
        step_s = self._last_step_s
        paced = time.monotonic() + step_s * (1 - share) / share
        floor = time.monotonic() + step_s * (1 - MAX_SHARE) / MAX_SHARE
        if not more:
            paced = max(paced, time.monotonic() + self.poll_s)
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= paced or readers_of(self.con).wanted:  # the writer wants the store alone: _run holds off
                return
            if now >= floor and self._oldest_wait_s() >= self.fresh_s:
                return
            self._stop.wait(min(self.poll_s, max(paced - now, 0.0)))

    def _oldest_wait_s(self) -> float:
        """How long the oldest stored row past the watermark has waited (0 when none does): maintenance/backlog.sql
        over the newest row groups only (zone maps on ingest_seq), a millisecond or two."""
        with store_cursor(self.con) as cur:
            catalog = str(cur.execute("SELECT current_database()").fetchall()[0][0])
            cur.execute("SET VARIABLE oa_lo = ?", [self.stats.seq])
            backlog = cur.execute(_script("backlog", catalog)).fetchall()
        self._waiting(backlog)
        return self.stats.lag_s if backlog else 0.0

    def step(self) -> bool:
        """Fold in one bounded range of new commits; True while more waits."""
        self._last_step_s = 0.0
        with store_cursor(self.con) as cur:
            catalog = str(cur.execute("SELECT current_database()").fetchall()[0][0])
            if not self._prepared:
                self._prepare(cur)
                self._prepared = True
                # a step's copies share DuckDB's memory limit with the writer's commits: at most a row per
                # STEP_BYTES_PER_ROW of it (100,000 rows at the default 1 GB; 8,192 at 64 MB)
                limit = setting_bytes(cur, "memory_limit")
                if limit:
                    self.step_rows = min(self.step_rows, max(MIN_STEP_ROWS, limit // STEP_BYTES_PER_ROW))
            lo = self.stats.seq
            cur.execute("SET VARIABLE oa_lo = ?", [lo])
            backlog = cur.execute(_script("backlog", catalog)).fetchall()
            self._waiting(backlog)
            marked = int(cur.execute("SELECT count(*) FROM dirty_traces").fetchall()[0][0])  # by retention
            if not backlog and not marked:
                if not self.stats.ready:
                    self._install_view(cur)
                return False
            hi, rows, commits = lo, 0, 0
            for seq, n, _ in backlog:
                if rows and rows + int(n) > self.step_rows:
                    break
                hi, rows, commits = int(seq), rows + int(n), commits + 1
            started = time.perf_counter()
            self._fold(cur, catalog, hi, rows)
            self._last_step_s = time.perf_counter() - started
            self._record(self._last_step_s)
            self._waiting(backlog[commits:])  # what this step's look found and left for the next
            return True

    def _waiting(self, backlog: list[tuple[Any, ...]]) -> None:
        """Report ``backlog`` (rows of maintenance/backlog.sql: seq, rows, oldest receive time) as waiting."""
        self.stats.backlog_commits = len(backlog)
        self.stats.backlog_rows = sum(int(r[1]) for r in backlog)
        oldest = min((r[2] for r in backlog if r[2] is not None), default=None)
        self.stats.lag_s = max(0.0, time.time() - oldest.timestamp()) if oldest is not None else 0.0

    def report(self) -> dict[str, Any]:
        """What /healthz shows under ``derived``."""
        s = self.stats
        return {
            "ready": s.ready,
            "seq": s.seq,
            "backlog_rows": s.backlog_rows,
            "backlog_commits": s.backlog_commits,
            "lag_s": round(s.lag_s, 3),
            "steps": s.steps,
            "rows_folded": s.rows_folded,
            "traces_folded": s.traces_folded,
            "runs_written": s.runs_written,
            "rebuilds": s.rebuilds,
            "step_seconds": round(s.step_seconds, 3),
            "max_step_ms": round(s.max_step_ms, 1),
            "recent_step_ms": [round(x, 1) for x in s.recent_step_ms[-8:]],
            "errors": s.errors,
            "last_error": s.last_error,
        }

    # -- pieces ------------------------------------------------------------------------------------------------
    def _prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """Continue the state the store holds, or drop it and start again from raw when it was built with other
        SQL or prices (or never)."""
        fingerprint = maintained_fingerprint(con)
        if _has_state(con) and _meta(con, FINGERPRINT_KEY) == fingerprint:
            self.stats.seq = int(_meta(con, SEQ_KEY) or 0)
            self.stats.ready = reads_maintained_runs(con)
            return
        con.execute("BEGIN")
        try:
            con.execute(statement("maintenance/drop_state"))
            con.execute(statement("views/runs/span_fields"))  # the query-time oa_scoped_spans
            con.execute(statement("maintenance/state"))
            _set_meta(con, SEQ_KEY, "0")
            _set_meta(con, FINGERPRINT_KEY, fingerprint)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self.stats.seq = 0
        self.stats.ready = False
        self.stats.rebuilds += 1
        log.info("maintained state: building it from the stored rows (the runs view reads raw meanwhile)")

    def _install_view(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute("BEGIN")
        try:
            con.execute(statement("maintenance/runs_view"))
            con.execute(statement("maintenance/scoped_spans"))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self.stats.ready = True
        log.info("maintained state: caught up; the runs view reads it")

    def _fold(self, con: duckdb.DuckDBPyConnection, catalog: str, hi: int, rows: int) -> None:
        con.execute("SET VARIABLE oa_hi = ?", [hi])
        con.execute("BEGIN")
        try:
            con.execute(_script("step_dirty", catalog))
            # the runs of the dirty traces as they were (run_traces) and as they are now (their classification)
            con.execute("CREATE OR REPLACE TEMP TABLE _m_scope_traces AS SELECT * FROM _m_dirty")
            con.execute(_script("step_scope", catalog))
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _m_runs_touched AS "
                "SELECT DISTINCT hash(run_id) AS run_h, run_id FROM _m_cls "
                "UNION SELECT run_h, run_id FROM run_traces "
                "WHERE h IN (SELECT h FROM _m_dirty) AND trace_id IN (SELECT trace_id FROM _m_dirty)"
            )
            # a run that also holds spans of traces not folded now (otel_agent.run.id across traces): fold those
            # traces with them, so its row is computed from all of its spans
            (extra,) = con.execute(
                "CREATE OR REPLACE TEMP TABLE _m_extra AS SELECT DISTINCT h, trace_id FROM run_traces "
                "WHERE run_h IN (SELECT run_h FROM _m_runs_touched) AND run_id IN (SELECT run_id FROM _m_runs_touched) "
                "AND trace_id NOT IN (SELECT trace_id FROM _m_dirty); SELECT count(*) FROM _m_extra"
            ).fetchall()[0]
            if extra:
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE _m_scope_traces AS "
                    "SELECT h, trace_id FROM _m_dirty UNION SELECT h, trace_id FROM _m_extra"
                )
                con.execute(_script("step_scope", catalog))
            con.execute(_script("step_apply", catalog))
            if con.execute(_PROXY_CANDIDATES).fetchall()[0][0]:
                con.execute(_script("step_proxy", catalog))
            traces = int(con.execute("SELECT count(*) FROM _m_dirty").fetchall()[0][0])
            runs = int(con.execute("SELECT count(*) FROM _m_rows").fetchall()[0][0])
            _set_meta(con, SEQ_KEY, str(hi))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self.stats.seq = hi
        self.stats.rows_folded += rows
        self.stats.traces_folded += traces
        self.stats.runs_written += runs

    def _record(self, elapsed: float) -> None:
        s = self.stats
        s.steps += 1
        s.step_seconds += elapsed
        s.max_step_ms = max(s.max_step_ms, elapsed * 1000)
        s.recent_step_ms.append(elapsed * 1000)
        del s.recent_step_ms[:-32]
