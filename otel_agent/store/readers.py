"""The gate between a store's writer and the threads that read it through cursors of the same connection.

A receiver's query API, console, review lookups and lifecycle planner read the store on cursors of the writer's
DuckDB connection, in their own threads. The writer may detach the store and attach it again (``store.recycle``),
which must never happen under an open cursor: a transaction running on the detached copy keeps it alive, and
the file would then be open twice in one process. So every such cursor is opened inside ``readers_of(con)
.reading()`` (``store.database.store_cursor`` and ``reading_cursor`` do it), and the writer detaches only inside
``alone()``, which a single open cursor refuses at once: the writer never waits for a reader, and a reader waits
at most one re-attach (tens of milliseconds).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from otel_agent.errors import StorageError

READER_WAIT_S = 30.0
"""Longest a reader waits for the writer to attach the store again (it takes tens of milliseconds; only a stuck
disk could make it longer, and no request waits forever)."""


class StoreReaders:
    """How many cursors read the store now, and whether the writer has it to itself."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reading = 0
        self._alone = False
        self.wanted = False
        """The writer found readers when it wanted the store alone and will try again (after its next checkpoint):
        a reader that can wait (the maintained state's thread) holds off meanwhile."""

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the store attached for the block (waiting while the writer re-attaches it)."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._alone, timeout=READER_WAIT_S):
                raise StorageError(f"the store has been away for {READER_WAIT_S:g} s (being attached again); retry")
            self._reading += 1
        try:
            yield
        finally:
            with self._cond:
                self._reading -= 1

    @contextmanager
    def alone(self) -> Iterator[bool]:
        """True when no cursor reads the store: no reader starts until the block ends. False at once otherwise."""
        with self._cond:
            free = not self._reading and not self._alone
            self.wanted = not free
            if free:
                self._alone = True
        try:
            yield free
        finally:
            if free:
                with self._cond:
                    self._alone = False
                    self._cond.notify_all()

    @property
    def active(self) -> int:
        """Cursors reading the store now."""
        with self._cond:
            return self._reading


_GATES: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, StoreReaders] = weakref.WeakKeyDictionary()
_GATES_LOCK = threading.Lock()


def readers_of(con: duckdb.DuckDBPyConnection) -> StoreReaders:
    """The gate of ``con``'s store (made on first use; it goes with the connection)."""
    with _GATES_LOCK:
        gate = _GATES.get(con)
        if gate is None:
            gate = _GATES[con] = StoreReaders()
        return gate
