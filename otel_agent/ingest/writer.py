"""The one writer: owns the write connection, commits waiting batches together, acknowledges after COMMIT.

``Writer`` puts together its pieces, one module each:

- admission (``ingest.admission``): the in-flight bound, refusals and their retry hint;
- the writer thread (``ingest.writer_thread``): the queue, gathering a group, maintenance steps between groups
  (``ingest.maintenance``: retention);
- the group commit (``ingest.group_commit``): one transaction per group, the re-delivery check, the inserts,
  the replies;
- the checkpoint and recycle policy (``ingest.checkpoints``, and ``store.recycle``'s block cache);
- the figures (``ingest.writer_stats``): ``health()`` reads them into one ``WriterHealth`` for /healthz.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

import duckdb

from otel_agent.fold.batch import FoldedBatch
from otel_agent.ingest.admission import Admission, AdmissionControl
from otel_agent.ingest.checkpoints import Checkpointer, CheckpointPolicy, take_over_checkpoints
from otel_agent.ingest.group_commit import INGEST_SEQUENCE, GroupCommit
from otel_agent.ingest.jobs import BatchJob, WriteJob
from otel_agent.ingest.maintenance import Maintenance
from otel_agent.ingest.writer_stats import STAGES, WriterHealth, WriterStats
from otel_agent.ingest.writer_thread import WriterThread
from otel_agent.store.recycle import BlockCache

__all__ = [
    "INGEST_SEQUENCE",
    "RECENT_MAX_KEYS",
    "RECENT_WINDOW_S",
    "STAGES",
    "Admission",
    "Maintenance",
    "Writer",
    "WriterHealth",
    "WriterStats",
    "take_over_checkpoints",
]

T = TypeVar("T")

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
        self.stats = WriterStats()
        self.admission = AdmissionControl(max_inflight_bytes, self.stats)
        self.group_commit = GroupCommit(
            con,
            stats=self.stats,
            admission=self.admission,
            block_cache=self.block_cache,
            recent_window_s=recent_window_s,
            recent_max_keys=recent_max_keys,
        )
        wal, threshold = take_over_checkpoints(con) if checkpoints is None else checkpoints
        self.checkpoints = CheckpointPolicy(wal, threshold)
        self.thread = WriterThread(
            self.group_commit,
            Checkpointer(con, self.checkpoints, self.block_cache, self.stats),
            self.admission,
            maintenance=maintenance,
            batch_max_items=batch_max_items,
            batch_timeout_s=batch_timeout_s,
        )

    @property
    def _thread(self) -> threading.Thread:
        """The writer's thread (tests look at its stack)."""
        return self.thread.thread

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
        return self.group_commit.ingest_seq

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
        return self.thread.queue_depth

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

    # -- work for the thread -----------------------------------------------------------------------------
    def submit(self, batch: FoldedBatch, admission: Admission) -> Future[FoldedBatch]:
        """Queue a decoded batch; the future resolves with the batch after its data has committed."""
        job = BatchJob(batch, admission, Future())
        self.group_commit.prepare(job)
        self.thread.enqueue(job)
        return job.future

    def run_write(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(con)`` on the writer thread inside its own transaction and return its result.

        For writes that are not OTLP (reviews, and anything else the product itself records): they go
        through the one writer like everything else, committed before this returns; an exception from
        ``fn`` rolls its transaction back and is raised here.
        """
        future: Future[T] = Future()
        self.thread.enqueue(WriteJob(fn, future))
        return future.result()

    def write(self, batch: FoldedBatch) -> FoldedBatch:
        """Admit, submit and wait: the embedded exporter's path."""
        admission = self.admit(batch.payload_bytes)
        return self.submit(batch, admission).result()

    def close(self) -> None:
        """Refuse new work, commit everything already queued, stop the thread."""
        self.admission.stop()
        self.thread.close()
