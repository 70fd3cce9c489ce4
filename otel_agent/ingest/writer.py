"""The one writer: owns the write connection, commits waiting batches together, acknowledges after COMMIT.

Its pieces, each its own object: admission (``ingest.admission``: the in-flight bound, refusals and their retry
hint), the group commit (this module: the thread, the queue, the re-delivery check, the inserts), the checkpoint
and recycle policy (``ingest.checkpoints``, and ``store.recycle``'s block cache), and the maintenance jobs run
between commits (``Maintenance``: retention). ``health()`` reads them into one ``WriterHealth`` for /healthz.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from otel_agent.errors import ShuttingDownError, StorageError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.admission import Admission, AdmissionControl
from otel_agent.ingest.checkpoints import CheckpointPolicy, take_over_checkpoints
from otel_agent.ingest.recent import BatchKeys, RecentKeys, batch_keys
from otel_agent.signals import SIGNALS, Signal
from otel_agent.store.database import SEQ_TABLES
from otel_agent.store.recycle import BlockCache
from otel_agent.store.statements import statement

log = logging.getLogger(__name__)


def _repeats(table: pa.Table, keys: tuple[str, ...]) -> int:
    """Rows of ``table`` whose key appears earlier in it (two copies of one span in one group commit)."""
    return table.num_rows - table.group_by(list(keys)).aggregate([]).num_rows


def _with_seq(table: pa.Table, seq: int) -> pa.Table:
    """``table`` with an ``ingest_seq`` column of ``seq`` on every row."""
    column = pc.fill_null(pa.nulls(table.num_rows, pa.int64()), pa.scalar(seq, pa.int64()))
    return table.append_column("ingest_seq", column)


T = TypeVar("T")

_MAINTENANCE_IDLE_S = 0.2
"""How often an idle writer runs its maintenance step."""


INGEST_SEQUENCE = "ingest_seq_gen"
"""The store's sequence of group commits (store/schema/005_ingest_seq.sql)."""


class Maintenance(Protocol):
    """Work the writer does between group commits on its connection (retention's deletes:
    otel_agent/lifecycle/retention.py). ``step`` runs before each wait for work, returns True while it has more,
    and must stay short (it delays the next commit); ``report`` is shown by /healthz."""

    def step(self, con: duckdb.DuckDBPyConnection) -> bool:
        """One bounded piece of work on the writer's connection; True while more is waiting."""
        ...

    def report(self) -> dict[str, Any]:
        """What /healthz shows under ``lifecycle``."""
        ...


@dataclass
class _BatchJob:
    """A decoded request to group-commit; ``future`` resolves with the batch once it has committed."""

    batch: FoldedBatch
    admission: Admission
    future: Future[FoldedBatch]
    keys: BatchKeys | None = None
    """The batch's re-delivery keys, packed in the submitting thread (None: no recent window)."""

    @property
    def items(self) -> int:
        return self.batch.items


@dataclass
class _WriteJob:
    """A function to run in its own transaction on the writer thread (see ``Writer.run_write``)."""

    fn: Callable[[duckdb.DuckDBPyConnection], Any]
    future: Future[Any]
    items: int = 0


_Job = _BatchJob | _WriteJob


@dataclass
class WriterStats:
    """Counters of the writer thread, reported by ``/healthz`` and the ingest benchmark."""

    commits: int = 0
    batches: int = 0
    items: int = 0
    failed_commits: int = 0
    refused: int = 0
    duplicate_queries: int = 0
    """Signal parts of group commits whose re-delivery check asked the store (outside the recent window)."""
    checkpoints: int = 0
    """CHECKPOINTs the writer ran after a group commit left the WAL at or past its threshold (or past
    ``IDLE_CHECKPOINT_FRACTION`` of it with nothing waiting)."""
    idle_checkpoints: int = 0
    """Those of ``checkpoints`` run early because no request was waiting."""
    commit_seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    stage_cpu_seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    """The writer thread's own CPU time in each stage (``time.thread_time``): a stage whose wall time grows while
    its CPU does not is waiting (for the GIL, a core or the disk), not doing more work. DuckDB's worker threads
    (a checkpoint runs on them too) are not counted."""


@dataclass(frozen=True)
class WriterHealth:
    """One snapshot of the writer for ``/healthz``: admission (queue and bytes in flight), group commit
    (counters, stage times), checkpoint and recycle policy, and the maintenance jobs' report — read in one call,
    so the HTTP layer knows this one object, not the writer's internals."""

    queue_depth: int
    inflight_bytes: int
    max_inflight_bytes: int
    commits: int
    ingest_seq: int | None
    items_committed: int
    commit_seconds: float
    refused: int
    failed_group_commits: int
    commit_stage_seconds: dict[str, float]
    commit_stage_cpu_seconds: dict[str, float]
    duplicate_queries: int
    checkpoints: int
    idle_checkpoints: int
    store_reattaches: int
    store_reattaches_deferred: int
    lifecycle: dict[str, Any] | None


STAGES = ("prepare", "duplicates", "insert", "commit", "checkpoint", "recycle")
"""Where commit time goes: building and registering the Arrow input, the re-delivery check (the recent window's
set, or the stored-duplicate query outside it), the inserts, COMMIT (WAL write and fsync), the checkpoints run
after a commit was acknowledged, and after each checkpoint the look at DuckDB's block cache and, when it is due,
the store's re-attach (``store.recycle``). Reported by /healthz and the ingest benchmark."""

RECENT_WINDOW_S = 120.0
"""How far back (by key time, against the wall clock) the in-memory set of stored keys reaches (``recent``)."""
RECENT_MAX_KEYS = 1_048_576
"""The most keys it holds per signal (~100 bytes each): past that the oldest seconds are left to the store."""


class Writer:
    """Group-committing writer thread over one DuckDB connection."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        max_inflight_bytes: int,
        batch_max_items: int = 50_000,
        batch_timeout_s: float = 0.0,
        maintenance: Maintenance | None = None,
        recent_window_s: float = RECENT_WINDOW_S,
        recent_max_keys: int = RECENT_MAX_KEYS,
        checkpoints: tuple[str | None, int] | None = None,
        block_cache_share: float = 0.0,
    ) -> None:
        """``checkpoints``: what ``take_over_checkpoints`` returned for ``con`` (it changes a setting, so a
        caller that locks the connection's configuration calls it first); None: call it here.
        ``block_cache_share``: re-attach the store after a checkpoint once DuckDB's cache of its blocks holds this
        share of the memory limit (``store.recycle``; 0: never; the receiver passes ``--block-cache-share``)."""
        self.con = con
        self.block_cache = BlockCache(con, block_cache_share)
        self.maintenance = maintenance
        self.batch_max_items = batch_max_items
        self.batch_timeout_s = batch_timeout_s
        self.stats = WriterStats()
        self.admission = AdmissionControl(max_inflight_bytes, self.stats)
        # Every statement is read once, at start: a missing file fails here, not on the first request.
        self._sql = {
            name: statement(name)
            for spec in SIGNALS.values()
            for statements in (spec.statements, *(t.statements for t in spec.lookups))
            for name in (statements.duplicates, statements.insert_all, statements.insert_new)
            if name
        }
        # Rebuilt from the store before the thread starts (0 keys: no window, every check asks the store).
        self._recent: dict[str, RecentKeys] = {}
        if recent_max_keys > 0:
            for name, spec in SIGNALS.items():
                self._recent[name] = RecentKeys(recent_window_s, recent_max_keys)
                self._recent[name].load(con, spec)
        # Rows are stamped with their group commit's number where the store has the sequence (open_store's stores;
        # a bare connection with the raw tables only, as some tests make, has none).
        self._sequenced = bool(
            con.execute(
                "SELECT count(*) FROM duckdb_sequences() "
                "WHERE sequence_name = ? AND database_name = current_database()",
                [INGEST_SEQUENCE],
            ).fetchall()[0][0]
        )
        self._ingest_seq: int | None = None
        wal, threshold = take_over_checkpoints(con) if checkpoints is None else checkpoints
        self.checkpoints = CheckpointPolicy(wal, threshold)
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._lock = threading.Lock()  # guards _closed and the stop marker
        self._closed = False  # the stop marker is queued: nothing put after it would be answered
        self._thread = threading.Thread(target=self._run, name="otel-agent-writer", daemon=True)
        self._thread.start()

    def health(self) -> WriterHealth:
        """The writer's figures for ``/healthz`` (``WriterHealth``)."""
        stats = self.stats
        return WriterHealth(
            queue_depth=self.queue_depth,
            inflight_bytes=self.inflight_bytes,
            max_inflight_bytes=self.max_inflight_bytes,
            commits=stats.commits,
            ingest_seq=self.ingest_seq,
            items_committed=stats.items,
            commit_seconds=round(stats.commit_seconds, 3),
            refused=stats.refused,
            failed_group_commits=stats.failed_commits,
            commit_stage_seconds={k: round(v, 3) for k, v in stats.stage_seconds.items()},
            commit_stage_cpu_seconds={k: round(v, 3) for k, v in stats.stage_cpu_seconds.items()},
            duplicate_queries=stats.duplicate_queries,
            checkpoints=stats.checkpoints,
            idle_checkpoints=stats.idle_checkpoints,
            store_reattaches=self.block_cache.recycles,
            store_reattaches_deferred=self.block_cache.deferred,
            lifecycle=self.maintenance.report() if self.maintenance else None,
        )

    @property
    def ingest_seq(self) -> int | None:
        """The number of the last group commit (``ingest_seq`` of its rows); None before the first or without the
        sequence."""
        return self._ingest_seq

    # -- admission (ingest.admission) --------------------------------------------------------------------
    @property
    def max_inflight_bytes(self) -> int:
        """The in-flight bound in bytes."""
        return self.admission.max_inflight_bytes

    @property
    def inflight_bytes(self) -> int:
        """Payload bytes admitted and not yet released."""
        return self.admission.inflight_bytes

    @property
    def queue_depth(self) -> int:
        """Jobs queued for the writer thread, not yet taken."""
        return self._queue.qsize()

    @property
    def accepting(self) -> bool:
        """False once ``close`` began: new requests are refused as shutting down."""
        return self.admission.accepting

    def admit(self, nbytes: int) -> Admission:
        """Reserve room for a request of ``nbytes`` (``AdmissionControl.admit``)."""
        return self.admission.admit(nbytes)

    def grow(self, admission: Admission, nbytes: int) -> None:
        """Reserve more for a request whose body is still being read (``AdmissionControl.grow``)."""
        self.admission.grow(admission, nbytes)

    def check_room(self) -> None:
        """Refuse now when the bound is already reached (``AdmissionControl.check_room``)."""
        self.admission.check_room()

    def retry_after_s(self) -> float:
        """The retry hint of a refusal (``AdmissionControl.retry_after_s``)."""
        return self.admission.retry_after_s()

    def release(self, admission: Admission) -> None:
        """Give back an admission's bytes (once)."""
        self.admission.release(admission)

    def submit(self, batch: FoldedBatch, admission: Admission) -> Future[FoldedBatch]:
        """Queue a decoded batch; the future resolves with the batch after its data has committed."""
        job = _BatchJob(batch, admission, Future())
        if batch.signal in self._recent:
            spec = SIGNALS[batch.signal]
            main = batch.tables.get(spec.main_table)
            job.keys = batch_keys(spec, main if main is not None else spec.tables[spec.main_table].empty_table())
        self._enqueue(job)
        return job.future

    def run_write(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(con)`` on the writer thread inside its own transaction and return its result.

        For writes that are not OTLP (reviews, and anything else the product itself records): they go
        through the one writer like everything else, committed before this returns; an exception from
        ``fn`` rolls its transaction back and is raised here.
        """
        future: Future[T] = Future()
        self._enqueue(_WriteJob(fn, future))
        return future.result()

    def _enqueue(self, job: _Job) -> None:
        """Queue a job, or fail its future when the thread has stopped (it would never be answered)."""
        with self._lock:
            if not self._closed:
                self._queue.put(job)
                return
        if isinstance(job, _BatchJob):
            self.release(job.admission)
        job.future.set_exception(ShuttingDownError("the receiver is shutting down"))

    def write(self, batch: FoldedBatch) -> FoldedBatch:
        """Admit, submit and wait: the embedded exporter's path."""
        admission = self.admit(batch.payload_bytes)
        return self.submit(batch, admission).result()

    # -- the thread --------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            first = self._next_job()
            if first is None:
                return
            group = [first]
            items = first.items
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
                items += nxt.items
            self._commit_group(group)
            self._checkpoint_when_due()
            if stop:
                return

    def _next_job(self) -> _Job | None:
        """The next job to commit. With maintenance (issue 17, otel_agent/lifecycle), one bounded step runs
        before each wait: between group commits under load, every ``_MAINTENANCE_IDLE_S`` when idle."""
        if self.maintenance is None:
            return self._queue.get()
        while True:
            try:
                busy = self.maintenance.step(self.con)
            except Exception as exc:  # maintenance must never stop ingest
                log.error("writer maintenance step failed: %s", exc)
                busy = False
            with suppress(queue.Empty):
                return self._queue.get(timeout=0 if busy else _MAINTENANCE_IDLE_S)

    def _commit_group(self, group: list[_Job]) -> None:
        batches: list[_BatchJob] = []
        for job in group:
            if isinstance(job, _WriteJob):
                self._run_job(job)
            else:
                batches.append(job)
        if not batches:
            return
        try:
            self._commit(batches)
            outcome: list[BaseException | None] = [None] * len(batches)
        except Exception as exc:  # one bad batch must not fail its neighbours: retry each alone
            log.warning("group commit of %d batches failed (%s); committing one by one", len(batches), exc)
            self.stats.failed_commits += 1
            outcome = []
            for job in batches:
                try:
                    self._commit([job])
                    outcome.append(None)
                except Exception as single:
                    log.error("commit failed: %s", single)
                    outcome.append(StorageError(f"commit failed: {single}"))
        for job, err in zip(batches, outcome, strict=True):
            self.release(job.admission)
            if err is None:
                job.future.set_result(job.batch)
            else:
                job.future.set_exception(err)

    def _checkpoint_when_due(self) -> None:
        """CHECKPOINT when the policy says so (``CheckpointPolicy``: the WAL grown by the threshold, or by
        ``IDLE_CHECKPOINT_FRACTION`` of it when no request is waiting): after the group's replies, on this thread,
        so it never runs beside a commit. A failure is logged; DuckDB's own checkpoint (at
        ``CHECKPOINT_BACKSTOP`` times the threshold) and the next attempt remain. Then the block cache's
        recycle policy (``store.recycle``) looks at DuckDB's cache of the store's blocks."""
        due = self.checkpoints.due(waiting=not self._queue.empty())
        if due is None:
            return
        started, cpu_started = time.perf_counter(), time.thread_time()
        try:
            self.con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            log.warning("checkpoint after a group commit failed: %s", exc)
        elapsed = time.perf_counter() - started
        self.stats.stage_cpu_seconds["checkpoint"] += time.thread_time() - cpu_started
        self.checkpoints.done()
        self.stats.checkpoints += 1
        self.stats.idle_checkpoints += not due
        self.stats.stage_seconds["checkpoint"] += elapsed
        self.stats.commit_seconds += elapsed
        with self._stage("recycle"):
            try:
                self.block_cache.after_checkpoint()
            except duckdb.Error as exc:  # the next commit attaches it again (BlockCache.ensure_attached)
                log.warning("re-attaching the store after a checkpoint failed: %s", exc)

    def _run_job(self, job: _WriteJob) -> None:
        con = self.con
        try:
            self.block_cache.ensure_attached()
            con.execute("BEGIN")
            result = job.fn(con)
            con.execute("COMMIT")
        except BaseException as exc:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            job.future.set_exception(exc)
            return
        job.future.set_result(result)

    def _commit(self, jobs: list[_BatchJob]) -> None:
        started = time.monotonic()
        self._commit_sql(jobs)
        elapsed = max(time.monotonic() - started, 1e-4)
        self.stats.commit_seconds += elapsed
        self.admission.committed(sum(j.batch.payload_bytes for j in jobs), elapsed)

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        """Add the wall time spent inside the block to ``stats.stage_seconds[name]``, the thread's CPU time to
        ``stats.stage_cpu_seconds[name]``."""
        started, cpu_started = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.stats.stage_seconds[name] += time.perf_counter() - started
            self.stats.stage_cpu_seconds[name] += time.thread_time() - cpu_started

    def _commit_sql(self, jobs: list[_BatchJob]) -> None:
        con = self.con
        by_signal: dict[str, list[_BatchJob]] = {}
        for j in jobs:
            by_signal.setdefault(j.batch.signal, []).append(j)
        self.block_cache.ensure_attached()
        con.execute("BEGIN")
        try:
            if self._sequenced:  # one number for the whole group commit (the rows' ingest_seq)
                self._ingest_seq = int(con.execute(f"SELECT nextval('{INGEST_SEQUENCE}')").fetchall()[0][0])
            for signal, members in by_signal.items():
                self._insert_signal(SIGNALS[signal], members)
            with self._stage("commit"):
                con.execute("COMMIT")
        except BaseException:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        with self._stage("duplicates"):  # stored now: the recent window takes their keys
            for signal, members in by_signal.items():
                recent = self._recent.get(signal)
                if recent is not None:
                    for j in members:
                        if j.keys is not None:
                            recent.committed(j.keys)
        batches = [j.batch for j in jobs]
        self.stats.commits += 1
        self.stats.batches += len(batches)
        self.stats.items += sum(b.accepted for b in batches)

    def _insert_signal(self, spec: Signal, jobs: list[_BatchJob]) -> None:
        """Insert one signal's part of a group commit: all of it when none of its items is stored or repeated
        (the fast path), else only the new ones (``docs/schema.md``, re-delivery). Whether any is stored is
        answered by the recent window when it covers every key's time, else by the store."""
        con, sql, statements = self.con, self._sql, spec.statements
        members = [j.batch for j in jobs]
        with self._stage("prepare"):
            incoming: dict[str, pa.Table] = {}
            for name, schema in spec.tables.items():
                parts = [m.tables[name] for m in members if name in m.tables]
                incoming[name] = pa.concat_tables(parts) if parts else schema.empty_table()
                if self._ingest_seq is not None and name in SEQ_TABLES:
                    incoming[name] = _with_seq(incoming[name], self._ingest_seq)
                con.register("incoming_" + name, incoming[name])
        with self._stage("duplicates"):
            recent = self._recent.get(spec.name)
            keys = [j.keys for j in jobs]
            if recent is not None and all(k is not None and k.keys is not None and recent.covers(k.low) for k in keys):
                packed = [key for k in keys for key in k.keys]  # type: ignore[union-attr]
                repeated = len(set(packed)) != len(packed)
                stored = recent.any_stored(packed)
            else:
                repeated = _repeats(incoming[spec.main_table], spec.key)
                (stored,) = con.execute(sql[statements.duplicates]).fetchall()[0]
                self.stats.duplicate_queries += 1
        fast = not (stored or repeated)
        with self._stage("insert"):
            con.execute(sql[statements.insert_all if fast else statements.insert_new]).fetchall()
            self._write_lookup_tables(spec, members, fast)
        with self._stage("prepare"):
            for name in spec.tables:
                con.unregister("incoming_" + name)

    def _write_lookup_tables(self, spec: Signal, members: list[FoldedBatch], fast: bool) -> None:
        """The lookup tables' rows the fold computed (traces: lineage_keys and parsed_retrieval_documents,
        store/schema/060_lineage_keys.sql, 070_retrieval_documents.sql). On the re-delivery path their SQL
        rules are applied to the spans stored now instead. Each statement runs only when the batch has rows for
        it: DuckDB plans every statement anew, ~1 ms even for an empty insert, on this one thread."""
        con, sql = self.con, self._sql
        for lookup in spec.lookups:
            parts = [
                m.tables[lookup.name] for m in members if lookup.name in m.tables and m.tables[lookup.name].num_rows
            ]
            if not parts:
                continue
            if fast:
                con.register("incoming_" + lookup.name, pa.concat_tables(parts))
                con.execute(sql[lookup.statements.insert_all]).fetchall()
                con.unregister("incoming_" + lookup.name)
            else:
                con.execute(sql[lookup.statements.insert_new]).fetchall()

    def close(self) -> None:
        """Refuse new work, commit everything already queued, stop the thread."""
        self.admission.stop()
        with self._lock:
            self._closed = True
            self._queue.put(None)
        self._thread.join()
