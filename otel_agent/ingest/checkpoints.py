"""The checkpoint policy of the writer (``ingest.writer``): when the store's WAL is folded into the file.

The writer runs DuckDB's CHECKPOINT itself, on its thread, right after a group commit's replies (never inside a
COMMIT that requests wait on), once the WAL has grown by the threshold — or by ``IDLE_CHECKPOINT_FRACTION`` of it
when no request is waiting. ``CheckpointPolicy`` decides *when*; ``Checkpointer`` runs it for the writer thread,
counts it, and then lets the block cache's recycle policy (``store.recycle``) look at DuckDB's cache.
"""

from __future__ import annotations

import logging
import os
import time

import duckdb

from otel_agent.ingest.writer_stats import WriterStats, timed_stage
from otel_agent.store.database import setting_bytes
from otel_agent.store.recycle import BlockCache

log = logging.getLogger(__name__)

CHECKPOINT_BACKSTOP = 4
"""DuckDB's own threshold is set this many times the configured one: it checkpoints inside a COMMIT only when one
group commit alone grows the WAL that far past the point where the writer would have checkpointed after it."""


def take_over_checkpoints(con: duckdb.DuckDBPyConnection) -> tuple[str | None, int]:
    """The WAL file of ``con``'s store and the size at which the writer checkpoints it (None, 0 for a store in
    memory, or a setting this cannot read: DuckDB then checkpoints as it always does).

    DuckDB runs an automatic checkpoint inside the COMMIT that crosses ``checkpoint_threshold``: every request
    of that group commit waits for it before its reply (≈ 75 ms per 32 MB of WAL; every 1.5–2 s at 20,000
    spans/s, so a few per cent of all requests: the whole p99 of a paced load). The writer runs it itself
    instead, right after that group's replies are released, so only requests arriving during it wait. Nothing
    acknowledged depends on it: the COMMIT already made the data durable in the WAL."""
    row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    if con.execute("SELECT current_setting('lock_configuration')").fetchone() == (True,):
        return None, 0
    if not row or not row[0]:
        return None, 0
    threshold = setting_bytes(con, "checkpoint_threshold")
    if threshold is None:
        return None, 0
    con.execute(f"SET checkpoint_threshold = '{threshold * CHECKPOINT_BACKSTOP} bytes'")
    return row[0] + ".wal", threshold


IDLE_CHECKPOINT_FRACTION = 0.5
"""With no request waiting after a group commit, the writer checkpoints once the WAL holds this fraction of the
threshold. A checkpoint's length follows the WAL it folds in, and requests that arrive during one wait for it:
under a paced load (the writer idle between commits) that wait is the p99, and half as much WAL halves it
(``bench/ingest.py --phases paced`` at 20,000 spans/s, six alternating rounds, 2026-12-03: p99 median 160 ms with
32 MB checkpoints, 142 ms with 16 MB). At full load the queue is never empty, checkpoints stay at the threshold,
and throughput does not pay for the extra ones (always checkpointing at 16 MB cost ~12 %)."""


class CheckpointPolicy:
    """When the next checkpoint is due: ``wal`` (the WAL file; None: a store in memory, or DuckDB checkpoints as
    it always does) and the ``threshold`` in bytes from ``take_over_checkpoints``. Whatever a checkpoint could not
    fold in (a reader holding old versions) counts toward the next."""

    def __init__(self, wal: str | None, threshold: int) -> None:
        self.wal = wal
        self.threshold = threshold
        self._at = threshold

    def wal_bytes(self) -> int:
        """The WAL's size now."""
        try:
            return os.stat(self.wal).st_size if self.wal else 0
        except FileNotFoundError:  # no WAL: nothing written since the last checkpoint
            return 0

    def due(self, *, waiting: bool) -> bool | None:
        """None: not now; True: the WAL reached the threshold; False: early, as nothing is ``waiting``."""
        if self.wal is None:
            return None
        wal = self.wal_bytes()
        if wal >= self._at:
            return True
        early_from = self._at - self.threshold * (1 - IDLE_CHECKPOINT_FRACTION)
        return None if wal < early_from or waiting else False

    def done(self) -> None:
        """A checkpoint ran: the next is due one threshold past what the WAL still holds."""
        self._at = self.wal_bytes() + self.threshold


class Checkpointer:
    """Runs the checkpoints ``policy`` calls for on ``con``, on the writer thread after a group commit's replies;
    counts them in ``stats``; then lets ``block_cache`` decide whether the store is re-attached."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, policy: CheckpointPolicy, block_cache: BlockCache, stats: WriterStats
    ) -> None:
        self.con = con
        self.policy = policy
        self.block_cache = block_cache
        self.stats = stats

    def after_group(self, *, waiting: bool) -> None:
        """CHECKPOINT when the policy says so (the WAL grown by the threshold, or by ``IDLE_CHECKPOINT_FRACTION``
        of it when no request is ``waiting``), so it never runs beside a commit. A failure is logged; DuckDB's own
        checkpoint (at ``CHECKPOINT_BACKSTOP`` times the threshold) and the next attempt remain. Then the block
        cache's recycle policy (``store.recycle``) looks at DuckDB's cache of the store's blocks."""
        due = self.policy.due(waiting=waiting)
        if due is None:
            return
        started, cpu_started = time.perf_counter(), time.thread_time()
        try:
            self.con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            log.warning("checkpoint after a group commit failed: %s", exc)
        elapsed = time.perf_counter() - started
        self.stats.stage_cpu_seconds["checkpoint"] += time.thread_time() - cpu_started
        self.policy.done()
        self.stats.checkpoints += 1
        self.stats.idle_checkpoints += not due
        self.stats.stage_seconds["checkpoint"] += elapsed
        self.stats.commit_seconds += elapsed
        with timed_stage(self.stats, "recycle"):
            try:
                self.block_cache.after_checkpoint()
            except duckdb.Error as exc:  # the next commit attaches it again (BlockCache.ensure_attached)
                log.warning("re-attaching the store after a checkpoint failed: %s", exc)
