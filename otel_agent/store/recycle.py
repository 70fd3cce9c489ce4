"""Keeping DuckDB's cache of the store's blocks below its memory limit: the writer detaches the store and
attaches it again once the cache holds ``share`` of ``memory_limit``.

Why: DuckDB keeps every block a checkpoint writes in its buffer pool until it must evict, so a receiver's pool
fills with blocks nobody reads again (~70-110 MB per million spans). Once it is full, each eviction in DuckDB
2.0.1 flushes its allocator for the whole process (jemalloc purges its arenas, glibc's heap is trimmed), and
from then on every thread of the receiver pays page faults on memory it had just freed: 13-18 % fewer spans
per second than the same receiver re-attaching, once the pool is full (~7 M spans of the lineage mix at the
1 GB default; a paired soak, docs/scale.md, 2026-12-05 (III)). There is no setting to drop the cached blocks;
detaching the store does, in ~40-60 ms at 10 M spans, right after a checkpoint (the WAL is then empty, so
attaching replays nothing). DuckDB lets a locked-down connection (``query.readonly.lock_down``) attach a file
it had attached. Readers on other threads are never cut off: the writer re-attaches only when no cursor
is open (``store.readers``), else it tries again after its next checkpoint.
"""

from __future__ import annotations

import logging
import time

import duckdb

from otel_agent.store.database import STORE_CATALOG, attach_store, setting_bytes, store_path
from otel_agent.store.readers import readers_of

log = logging.getLogger(__name__)

DEFAULT_CATALOG = "memory"
"""DuckDB's name for the in-memory database a store connection starts in (``open_store`` connects to
``:memory:`` and attaches the file): the default while the store is detached."""

_CACHED_SQL = "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"


def cached_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """Bytes of table blocks DuckDB holds in its buffer pool (every attached database of ``con``'s instance).

    ``fetchall``, not ``fetchone``: a result read only in part stays open on the writer's connection, and with it
    the query's transaction, until the next statement; an idle writer then held an old snapshot between commits,
    and the paced p99 was ~1.5x (``bench/ingest.py --ref . --ref-receiver-args "--block-cache-share 0"``)."""
    return int(con.execute(_CACHED_SQL).fetchall()[0][0])


class BlockCache:
    """The writer's half: ``after_checkpoint`` re-attaches the store when its cached blocks reach the threshold.

    Off (``threshold`` 0) for a share of 0, a store in memory (detaching would drop it) or a memory limit
    DuckDB does not show as a size."""

    def __init__(self, con: duckdb.DuckDBPyConnection, share: float) -> None:
        self.con = con
        self.path = store_path(con)
        limit = setting_bytes(con, "memory_limit") if share > 0 and self.path else None
        self.threshold = int(share * limit) if limit else 0
        self.recycles = 0
        """Times the store was detached and attached again."""
        self.deferred = 0
        """Times it was due but a reader held a cursor (tried again after the next checkpoint)."""
        self.detached = False
        """The store is detached and attaching it again failed (``ensure_attached`` retries)."""

    def after_checkpoint(self) -> bool:
        """Re-attach the store if its cache has reached the threshold and no reader is in it; True if done."""
        if not self.threshold or cached_bytes(self.con) < self.threshold:
            return False
        with readers_of(self.con).alone() as free:
            if not free:
                self.deferred += 1
                return False
            started = time.perf_counter()
            self.con.execute(f"USE {DEFAULT_CATALOG}")
            self.con.execute(f"DETACH {STORE_CATALOG}")
            self.detached = True
            self._attach()
        self.recycles += 1
        log.debug("store re-attached to empty DuckDB's block cache in %.0f ms", 1000 * (time.perf_counter() - started))
        return True

    def ensure_attached(self) -> None:
        """Before a commit: attach the store again if the last attempt failed (raises ``duckdb.Error`` while it
        cannot, so the commit fails with a retryable reply instead of writing elsewhere)."""
        if self.detached:
            with readers_of(self.con).alone() as free:
                if not free:
                    raise duckdb.IOException("the store is detached and a reader holds a cursor; retry")
                self._attach()

    def _attach(self) -> None:
        assert self.path is not None
        try:
            attach_store(self.con, self.path)
        except duckdb.Error as exc:
            log.error("attaching the store again failed (%s): commits fail until it succeeds", exc)
            raise
        self.detached = False
