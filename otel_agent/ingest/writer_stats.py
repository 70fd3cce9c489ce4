"""The writer's figures (``ingest.writer``): counters of its thread (``WriterStats``), where commit time goes
(``STAGES``, timed by ``timed_stage``), and the one snapshot ``/healthz`` reads (``WriterHealth``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

STAGES = ("prepare", "duplicates", "insert", "commit", "checkpoint", "recycle")
"""Where commit time goes: building and registering the Arrow input, the re-delivery check (the recent window's
set, or the stored-duplicate query outside it), the inserts, COMMIT (WAL write and fsync), the checkpoints run
after a commit was acknowledged, and after each checkpoint the look at DuckDB's block cache and, when it is due,
the store's re-attach (``store.recycle``). Reported by /healthz and the ingest benchmark."""


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


@contextmanager
def timed_stage(stats: WriterStats, name: str) -> Iterator[None]:
    """Add the wall time spent inside the block to ``stats.stage_seconds[name]``, the thread's CPU time to
    ``stats.stage_cpu_seconds[name]``."""
    started, cpu_started = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        stats.stage_seconds[name] += time.perf_counter() - started
        stats.stage_cpu_seconds[name] += time.thread_time() - cpu_started


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
