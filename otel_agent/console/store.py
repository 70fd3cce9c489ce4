"""How the console runs the read layer: page jobs on cursors of one connection, on a bounded thread pool.

Inside ``otel-agent serve`` the connection is the receiver's own (cursors read beside the writer, as the query
API does); in ``otel-agent ui`` it is a read-only connection over one file or several shards
(``query.client.open_readonly``). Page handlers run one ``load`` job per request: a function that gets a
``read.source.CursorSource`` and calls the read layer's functions on that one cursor, off the event loop, with a
time limit. What the jobs ask is the read layer's (``otel_agent.read``); this module owns only when and where.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import duckdb

from otel_agent.errors import QueryTimeoutError
from otel_agent.read.runs import reads_maintained
from otel_agent.read.source import CursorSource, named
from otel_agent.read.stores import reading_cursor

T = TypeVar("T")
log = logging.getLogger(__name__)

SNAPSHOT_MAX_AGE_S = 300.0
"""How old a snapshot may get before a page view takes it again (when data arrived): copying the runs view
classifies every span, which on a large store takes the CPU the writer needs (bench/console.py), so at most
every 5 minutes unless someone asks (the runs page's "refresh" link)."""
FIRST_WAIT_S = 5.0
"""How long a page waits for a snapshot's first copy before it answers "still reading" (and refreshes itself)."""
RESULT_FRESH_S = 1.0
"""How long a page's query results are reused after they were read, however much was written meanwhile: a
reload, a node clicked in a run's tree, a page refreshed in a loop cost the receiver's writer nothing for this
long (bench/console.py). Past it, results are reused only while the store is unchanged (same generation)."""
RESULT_ENTRIES = 32
"""How many pages' results are kept (least recently used dropped first): a run page of 5,000 spans is a few MB."""
READER_NICE = 10
"""The scheduling niceness of the console's pool threads inside a receiver (``live``): a page's planning and
reading run in the pool thread that called DuckDB, so when the machine is short of CPU the receiver's ingest
threads (gRPC, decode, writer) come first and a page waits instead (bench/console.py --ingest-cost). With CPU to
spare it changes nothing. Linux sets it per thread; elsewhere the threads keep the process's."""


def lower_priority(nice: int) -> None:
    """Make the calling thread ``nice`` steps nicer (a pool initializer): on Linux a thread id is a process id
    for ``setpriority``; where that fails (another OS, a container forbidding it) the thread keeps its priority."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except (AttributeError, OSError):
        pass


class Snapshot:
    """The rows of one whole-store query (``read/sql/<name>.sql``) copied into a private in-memory DuckDB
    as table ``table``, so list pages filter, sort and page them with their own ``.sql`` files in milliseconds.

    Why: the ``runs`` view classifies every span of the store (seconds on 1 M spans) and a list page needs it
    whole to sort and filter by derived values. The copy is taken again when the store has changed
    (``generation``) and the copy is older than ``max_age_s``; meanwhile pages show the copy and its time
    (stale-while-revalidate: one refresh at a time, in the pool). A closed store (``otel-agent ui``) is copied
    once.
    """

    def __init__(self, name: str, table: str, max_age_s: float) -> None:
        self.name, self.table, self.max_age_s = name, table, max_age_s
        self.db = duckdb.connect(":memory:", config={"temp_directory": ""})  # small: never spills to a .tmp folder
        self.db.execute("SET enable_external_access = false")
        self.taken_at: float | None = None  # time.time() of the copy
        self.pending: Future[None] | None = None
        self.generation: int | None = None
        self.refreshing = False
        self.lock = threading.Lock()

    def refresh(self, store: ConsoleStore) -> None:
        generation = store.generation()
        taken = time.time()
        table = store.run(lambda q: q.cursor.sql(named(self.name)).to_arrow_table(), timeout_s=store.snapshot_timeout_s)
        with self.lock:
            self.db.register("snapshot_new", table)
            self.db.execute(f"CREATE OR REPLACE TABLE {self.table} AS SELECT * FROM snapshot_new")
            self.db.unregister("snapshot_new")
            self.taken_at, self.generation = taken, generation

    def stale(self, store: ConsoleStore) -> bool:
        return self.taken_at is not None and (
            self.generation != store.generation() and time.time() - self.taken_at > self.max_age_s
        )

    def source(self) -> CursorSource:
        return CursorSource(self.db.cursor())


class ResultCache:
    """The query results of recent page loads, keyed by page and arguments (``ConsoleStore.load(fn, key=…)``).

    An entry is reused while the store's generation is the one read before its queries ran (nothing was
    committed since: a closed store, an idle receiver), or for ``fresh_s`` after it was read whatever spans were
    committed (so a page is at most that much older than the store while spans arrive) — but never once a
    review or trust change was written (``marks``): a page shows a review as soon as it is recorded, through
    the console, ``/v1/review`` or the CLI. Results are shared, not copied: pages must not change what ``load``
    returned.
    """

    def __init__(self, entries: int = RESULT_ENTRIES, fresh_s: float = RESULT_FRESH_S) -> None:
        self.entries, self.fresh_s = entries, fresh_s
        self._data: OrderedDict[Hashable, tuple[int, Hashable, float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, generation: int, marks: Hashable) -> tuple[bool, Any]:
        with self._lock:
            found = self._data.get(key)
            if found is None:
                return False, None
            gen, old_marks, read_at, value = found
            if old_marks != marks or (gen != generation and time.monotonic() - read_at > self.fresh_s):
                del self._data[key]
                return False, None
            self._data.move_to_end(key)
            return True, value

    def put(self, key: Hashable, generation: int, marks: Hashable, read_at: float, value: Any) -> None:
        with self._lock:
            self._data[key] = (generation, marks, read_at, value)
            self._data.move_to_end(key)
            while len(self._data) > self.entries:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class ConsoleStore:
    """A connection the console reads, a pool of ``workers`` threads and a per-request time limit.

    ``generation`` tells whether the store changed (the receiver's commit count; constant for closed files);
    ``live``: a receiver writes the store (so reviews and trust changes are counted too, ``write_marks``, and the
    pool threads yield the CPU to ingest, ``READER_NICE``).
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        workers: int = 2,
        timeout_s: float = 10.0,
        generation: Callable[[], int] | None = None,
        snapshot_max_age_s: float = SNAPSHOT_MAX_AGE_S,
        snapshot_timeout_s: float = 600.0,
        live: bool = False,
    ) -> None:
        self.con = con
        self.live = live
        self.snapshot_timeout_s = snapshot_timeout_s
        self.timeout_s = timeout_s
        self.generation = generation or (lambda: 0)
        self.pool = ThreadPoolExecutor(
            max_workers=workers,
            thread_name_prefix="console",
            initializer=functools.partial(lower_priority, READER_NICE) if live else None,
        )
        self.snapshots = {"runs": Snapshot("runs_snapshot", "runs", snapshot_max_age_s)}
        self.results = ResultCache()
        self.closed = False
        self._active: set[duckdb.DuckDBPyConnection] = set()
        self._active_lock = threading.Lock()
        self._snapshot_lock = threading.Lock()

    def runs_maintained(self) -> bool:
        """Whether the runs view the console reads is over the maintained rows (store/maintained.py), so the runs
        page reads it live instead of through a snapshot."""
        return self.run(reads_maintained)

    async def from_snapshot(
        self, key: str, fn: Callable[[CursorSource], T], *, refresh: bool = False, args: Hashable | None = None
    ) -> tuple[T | None, float]:
        """``fn`` over the snapshot ``key`` and the snapshot's time; ``(None, 0)`` while the first copy is still
        being taken after ``FIRST_WAIT_S`` (the page says so and refreshes itself: no request waits for long).
        With ``args`` (the page's arguments), the results over the same copy are reused (``ResultCache``)."""
        snap = self.snapshots[key]
        if snap.taken_at is None or snap.stale(self) or (refresh and snap.generation != self.generation()):
            with self._snapshot_lock:
                start = not snap.refreshing
                snap.refreshing = True
            if start:
                snap.pending = self.pool.submit(self._refresh_quietly, snap)
        if snap.taken_at is None:
            pending = snap.pending
            if pending is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(pending)), FIRST_WAIT_S)
                except TimeoutError:
                    return None, 0.0
            if snap.taken_at is None:
                raise QueryTimeoutError(f"the {key} list could not be read; see the log")

        def read() -> tuple[T, float]:
            with snap.lock:
                taken_at = float(snap.taken_at or 0)
                cache_key = None if args is None else ("snapshot", key, taken_at, args)
                if cache_key is not None:
                    hit, value = self.results.get(cache_key, 0, None)  # the copy's time is in the key: exact
                    if hit:
                        return value, taken_at
                q = snap.source()
                try:
                    value = fn(q)
                finally:
                    q.cursor.close()
                if cache_key is not None:
                    self.results.put(cache_key, 0, None, time.monotonic(), value)
                return value, taken_at

        return await self.call(read)

    def _refresh_quietly(self, snap: Snapshot) -> None:
        try:
            snap.refresh(self)
        except Exception:  # the old copy stays; the next stale read tries again
            log.exception("console: refreshing the %s snapshot failed", snap.table)
        finally:
            snap.refreshing = False

    def run(self, fn: Callable[[CursorSource], T], timeout_s: float | None = None) -> T:
        """Run ``fn`` on a fresh cursor in the calling thread, interrupted after ``timeout_s``."""
        timeout_s = timeout_s or self.timeout_s
        if self.closed:
            raise QueryTimeoutError("the console is stopping")
        with reading_cursor(self.con) as cur:  # a receiver with an archive: live ∪ archive
            with self._active_lock:
                self._active.add(cur)
            timed_out = threading.Event()

            def interrupt() -> None:
                timed_out.set()
                cur.interrupt()

            timer = threading.Timer(timeout_s, interrupt)
            timer.start()
            try:
                return fn(CursorSource(cur, con=self.con))
            except duckdb.Error as exc:
                if timed_out.is_set():
                    raise QueryTimeoutError(f"the page's queries exceeded {timeout_s:g} s") from exc
                raise
            finally:
                timer.cancel()
                with self._active_lock:
                    self._active.discard(cur)

    async def load(self, fn: Callable[[CursorSource], T], key: Hashable | None = None) -> T:
        """``run`` on the pool, never on the event loop. With a ``key`` (the page and its arguments), the results
        of a recent load of the same key are reused (``ResultCache``)."""
        if key is None:
            return await asyncio.get_running_loop().run_in_executor(self.pool, self.run, fn)
        return await asyncio.get_running_loop().run_in_executor(self.pool, self._run_cached, key, fn)

    def _run_cached(self, key: Hashable, fn: Callable[[CursorSource], T]) -> T:
        # both read before the queries: the results are at least this new
        generation, marks = self.generation(), self.write_marks()
        hit, value = self.results.get(key, generation, marks)
        if hit:
            return value  # type: ignore[no-any-return]
        read_at = time.monotonic()
        value = self.run(fn)
        self.results.put(key, generation, marks, read_at, value)
        return value

    def write_marks(self) -> Hashable:
        """For a live store, the row counts of the tables written outside OTLP commits, which the generation
        (the commit count) does not see: reviews and writer trust (``read/sql/write_marks.sql``). None for closed
        files."""
        if not self.live:
            return None
        marks = self.run(lambda q: q.one("write_marks"))
        return tuple((marks or {}).values())

    async def call(self, fn: Callable[[], T]) -> T:
        """Any blocking call (a review write) on the pool."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    def close(self) -> None:
        """Stop: interrupt the queries still running and wait for them, so the connection can be closed."""
        self.closed = True
        with self._active_lock:
            for cur in list(self._active):
                cur.interrupt()
        self.pool.shutdown(wait=True, cancel_futures=True)
