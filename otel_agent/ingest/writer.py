"""The one writer: owns the write connection, commits waiting batches together, acknowledges after COMMIT.

Flow control is by admission: a request reserves its payload size before it is decoded and releases it
after its commit, so memory held by decoding, queueing and committing is bounded. A request that does not
fit gets ``QueueFullError`` at once (a retryable reply), never a silent drop.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TypeVar

import duckdb
import pyarrow as pa

from otel_agent.errors import QueueFullError, ShuttingDownError, StorageError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.logs import LOGS_SCHEMA
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA
from otel_agent.store.statements import statement

log = logging.getLogger(__name__)

# signal → (SQL file prefix in store/ingest/, {incoming table name: schema}). Each prefix has three files:
# _duplicates.sql (counts stored items), _insert_all.sql (the fast path when none is stored or repeated) and
# _insert_new.sql (the re-delivery path).
_SIGNAL_SQL = {
    "traces": (
        "spans",
        {"spans": SPANS_SCHEMA, "span_events": SPAN_EVENTS_SCHEMA, "span_links": SPAN_LINKS_SCHEMA},
    ),
    "logs": ("logs", {"logs": LOGS_SCHEMA}),
    "metrics": ("metric_points", {"metric_points": METRIC_POINTS_SCHEMA}),
}
# The re-delivery key of each signal's main table (see docs/schema.md).
_KEYS = {
    "traces": ["end_time", "trace_id", "span_id"],
    "logs": ["time", "content_hash"],
    "metrics": ["time", "content_hash"],
}


def _repeats(table: pa.Table, keys: list[str]) -> int:
    """Rows of ``table`` whose key appears earlier in it (two copies of one span in one group commit)."""
    return table.num_rows - table.group_by(keys).aggregate([]).num_rows


T = TypeVar("T")


@dataclass
class _WriteJob:
    """A function to run in its own transaction on the writer thread (see ``Writer.run_write``)."""

    fn: Callable[[duckdb.DuckDBPyConnection], object]
    items: int = 0


@dataclass
class Admission:
    nbytes: int
    released: bool = False


@dataclass
class WriterStats:
    commits: int = 0
    batches: int = 0
    items: int = 0
    failed_commits: int = 0
    refused: int = 0
    commit_seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))


STAGES = ("prepare", "duplicates", "insert", "commit")
"""Where commit time goes: building and registering the Arrow input and counting repeats, the stored-duplicate
query, the inserts, and COMMIT (WAL write and fsync). Reported by /healthz and the ingest benchmark."""


class Writer:
    """Group-committing writer thread over one DuckDB connection."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        max_inflight_bytes: int,
        batch_max_items: int = 50_000,
        batch_timeout_s: float = 0.0,
    ) -> None:
        self.con = con
        self.max_inflight_bytes = max_inflight_bytes
        self.batch_max_items = batch_max_items
        self.batch_timeout_s = batch_timeout_s
        self.stats = WriterStats()
        self._sql = {  # signal → its statements (otel_agent/store/statements.py, QUERIES)
            "traces": {
                "duplicates": statement("ingest/spans_duplicates"),
                "insert_all": statement("ingest/spans_insert_all"),
                "insert_new": statement("ingest/spans_insert_new"),
            },
            "logs": {
                "duplicates": statement("ingest/logs_duplicates"),
                "insert_all": statement("ingest/logs_insert_all"),
                "insert_new": statement("ingest/logs_insert_new"),
            },
            "metrics": {
                "duplicates": statement("ingest/metric_points_duplicates"),
                "insert_all": statement("ingest/metric_points_insert_all"),
                "insert_new": statement("ingest/metric_points_insert_new"),
            },
        }
        self._lookup_sql = {
            "lineage_keys": {
                "all": statement("ingest/lineage_keys_insert_all"),
                "new": statement("ingest/lineage_keys_insert_new"),
            },
            "parsed_retrieval_documents": {
                "all": statement("ingest/documents_insert_all"),
                "new": statement("ingest/documents_insert_new"),
            },
        }
        self._queue: queue.Queue[tuple[FoldedBatch, Admission, Future[FoldedBatch]] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._inflight = 0
        self._commit_rate = 0.0  # payload bytes committed per second of commit work (moving average)
        self._accepting = True
        self._thread = threading.Thread(target=self._run, name="otel-agent-writer", daemon=True)
        self._thread.start()

    # -- admission -------------------------------------------------------------------------------------
    @property
    def inflight_bytes(self) -> int:
        return self._inflight

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    def admit(self, nbytes: int) -> Admission:
        """Reserve room for a request of ``nbytes``; raises when full or stopping.

        A request larger than the whole bound is still admitted when nothing else is in flight, so one big
        request cannot be refused forever.
        """
        with self._lock:
            if not self._accepting:
                raise ShuttingDownError("the receiver is shutting down")
            if self._inflight and self._inflight + nbytes > self.max_inflight_bytes:
                self.stats.refused += 1
                raise QueueFullError(
                    f"in-flight data at its bound ({self._inflight} of {self.max_inflight_bytes} bytes)",
                    retry_after_s=self.retry_after_s(),
                )
            self._inflight += nbytes
        return Admission(nbytes)

    def retry_after_s(self) -> float:
        """A jittered hint for refused clients: about the time to drain what is in flight, at least 1 s.

        Jitter matters: SDK exporters use the server's hint instead of their own randomized backoff, so a
        fixed hint would bring every refused client back at the same instant.
        """
        drain = self._inflight / self._commit_rate if self._commit_rate else 0.0
        return max(1.0, drain) * random.uniform(0.5, 1.5)

    def release(self, admission: Admission) -> None:
        with self._lock:
            if not admission.released:
                admission.released = True
                self._inflight -= admission.nbytes

    def submit(self, batch: FoldedBatch, admission: Admission) -> Future[FoldedBatch]:
        """Queue a decoded batch; the future resolves with the batch after its data has committed."""
        fut: Future[FoldedBatch] = Future()
        self._queue.put((batch, admission, fut))
        return fut

    def run_write(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(con)`` on the writer thread inside its own transaction and return its result.

        For writes that are not OTLP (reviews, and anything else the product itself records): they go
        through the one writer like everything else, committed before this returns; an exception from
        ``fn`` rolls its transaction back and is raised here.
        """
        fut: Future[T] = Future()
        self._queue.put((_WriteJob(fn), Admission(0), fut))  # type: ignore[arg-type]
        return fut.result()

    def write(self, batch: FoldedBatch) -> FoldedBatch:
        """Admit, submit and wait: the embedded exporter's path."""
        admission = self.admit(batch.payload_bytes)
        return self.submit(batch, admission).result()

    # -- the thread --------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group = [first]
            items = first[0].items
            deadline = time.monotonic() + self.batch_timeout_s
            stop = False
            while items < self.batch_max_items:
                try:
                    remaining = deadline - time.monotonic()
                    nxt = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                group.append(nxt)
                items += nxt[0].items
            self._commit_group(group)
            if stop:
                return

    def _commit_group(self, group: list[tuple[FoldedBatch, Admission, Future[FoldedBatch]]]) -> None:
        jobs = [g for g in group if isinstance(g[0], _WriteJob)]
        if jobs:
            group = [g for g in group if not isinstance(g[0], _WriteJob)]
            for job, _, fut in jobs:
                self._run_job(job, fut)  # type: ignore[arg-type]
            if not group:
                return
        try:
            self._commit([g[0] for g in group])
            outcome: list[BaseException | None] = [None] * len(group)
        except Exception as exc:  # one bad batch must not fail its neighbours: retry each alone
            log.warning("group commit of %d batches failed (%s); committing one by one", len(group), exc)
            self.stats.failed_commits += 1
            outcome = []
            for batch, _, _ in group:
                try:
                    self._commit([batch])
                    outcome.append(None)
                except Exception as single:
                    log.error("commit failed: %s", single)
                    outcome.append(StorageError(f"commit failed: {single}"))
        for (batch, admission, fut), err in zip(group, outcome, strict=True):
            self.release(admission)
            if err is None:
                fut.set_result(batch)
            else:
                fut.set_exception(err)

    def _run_job(self, job: _WriteJob, fut: Future) -> None:
        con = self.con
        try:
            con.execute("BEGIN")
            result = job.fn(con)
            con.execute("COMMIT")
        except BaseException as exc:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            fut.set_exception(exc)
            return
        fut.set_result(result)

    def _commit(self, batches: list[FoldedBatch]) -> None:
        started = time.monotonic()
        self._commit_sql(batches)
        elapsed = max(time.monotonic() - started, 1e-4)
        self.stats.commit_seconds += elapsed
        rate = sum(b.payload_bytes for b in batches) / elapsed
        self._commit_rate = rate if not self._commit_rate else 0.8 * self._commit_rate + 0.2 * rate

    def _commit_sql(self, batches: list[FoldedBatch]) -> None:
        con = self.con
        by_signal: dict[str, list[FoldedBatch]] = {}
        for b in batches:
            by_signal.setdefault(b.signal, []).append(b)
        stage = self.stats.stage_seconds
        t0 = time.perf_counter()
        con.execute("BEGIN")
        try:
            for signal, members in by_signal.items():
                _, tables = _SIGNAL_SQL[signal]
                incoming: dict[str, pa.Table] = {}
                for name, schema in tables.items():
                    parts = [m.tables[name] for m in members if name in m.tables]
                    incoming[name] = pa.concat_tables(parts) if parts else schema.empty_table()
                    con.register("incoming_" + name, incoming[name])
                sql = self._sql[signal]
                repeated = _repeats(incoming[next(iter(tables))], _KEYS[signal])
                t1 = time.perf_counter()
                stage["prepare"] += t1 - t0
                (stored,) = con.execute(sql["duplicates"]).fetchall()[0]
                t2 = time.perf_counter()
                stage["duplicates"] += t2 - t1
                fast = not (stored or repeated)
                con.execute(sql["insert_all"] if fast else sql["insert_new"]).fetchall()
                if signal == "traces":
                    self._write_lookup_tables(members, fast)
                t0 = time.perf_counter()
                stage["insert"] += t0 - t2
                for name in tables:
                    con.unregister("incoming_" + name)
            t3 = time.perf_counter()
            con.execute("COMMIT")
            stage["commit"] += time.perf_counter() - t3
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
        self.stats.commits += 1
        self.stats.batches += len(batches)
        self.stats.items += sum(b.accepted for b in batches)

    def _write_lookup_tables(self, members: list[FoldedBatch], fast: bool) -> None:
        """The lookup tables' rows the fold computed: lineage_keys and parsed_retrieval_documents
        (store/schema/060_lineage_keys.sql, 070_retrieval_documents.sql). On the re-delivery path their SQL
        rules are applied to the spans stored now instead. Each statement runs only when the batch has rows for
        it: DuckDB plans every statement anew, ~1 ms even for an empty insert, on this one thread."""
        con, sql = self.con, self._lookup_sql
        for table in ("lineage_keys", "parsed_retrieval_documents"):
            parts = [m.tables[table] for m in members if table in m.tables and m.tables[table].num_rows]
            if not parts:
                continue
            if fast:
                con.register("incoming_" + table, pa.concat_tables(parts))
                con.execute(sql[table]["all"]).fetchall()
                con.unregister("incoming_" + table)
            else:
                con.execute(sql[table]["new"]).fetchall()

    def close(self) -> None:
        """Refuse new work, commit everything already queued, stop the thread."""
        with self._lock:
            self._accepting = False
        self._queue.put(None)
        self._thread.join()
