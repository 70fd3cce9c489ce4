"""How the console reads the store: named queries on cursors of one connection, on a bounded thread pool.

Inside ``otel-agent serve`` the connection is the receiver's own (cursors read beside the writer, as the query
API does); in ``otel-agent ui`` it is a read-only connection over one file or several shards
(``query.client.open_readonly``). Page handlers run one ``load`` job per request: a function that gets a
``Queries`` object and may run several named queries on the same cursor, off the event loop, with a time limit.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import duckdb

from otel_agent.errors import QueryTimeoutError
from otel_agent.export.reader import Reader
from otel_agent.store.database import store_cursor
from otel_agent.store.sql_files import read_sql

T = TypeVar("T")

FOLDER = "console"


@functools.cache
def console_sql(name: str) -> str:
    """The text of ``otel_agent/store/console/<name>.sql``."""
    return read_sql(FOLDER, f"{name}.sql")


class Queries:
    """Named queries on one cursor (``$name`` parameters, passed as keywords)."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection) -> None:
        self.cursor = cursor

    def rows(self, name: str, **params: Any) -> list[dict[str, Any]]:
        rel = self.cursor.execute(console_sql(name), params)
        columns = [d[0] for d in rel.description]
        return [dict(zip(columns, row, strict=True)) for row in rel.fetchall()]

    def one(self, name: str, **params: Any) -> dict[str, Any] | None:
        found = self.rows(name, **params)
        return found[0] if found else None

    def reader(self) -> Reader:
        """The export module's reader over this cursor (report and bundle downloads)."""
        return CursorReader(dbs=[], cursor=self.cursor)


class CursorReader(Reader):
    """``export.reader.Reader`` reading through a cursor instead of ``run_sql`` (same paging, same JSON rows)."""

    def __init__(self, dbs: list[str], cursor: duckdb.DuckDBPyConnection) -> None:
        super().__init__(dbs)
        self.cursor = cursor

    def rows(
        self, sql: str, params: list[Any] | None = None, *, order_by: str, limit: int | None = None
    ) -> list[dict[str, Any]]:
        paged = f"SELECT to_json(q)::VARCHAR AS row FROM ({sql}) q ORDER BY {order_by}"
        if limit is not None:
            paged += f" LIMIT {int(limit)}"
        self.queries.append(paged)
        return [json.loads(r[0]) for r in self.cursor.execute(paged, params or []).fetchall()]


class ConsoleStore:
    """A connection the console reads, a pool of ``workers`` threads and a per-request time limit."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, workers: int = 2, timeout_s: float = 10.0) -> None:
        self.con = con
        self.timeout_s = timeout_s
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="console")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return store_cursor(self.con)

    def run(self, fn: Callable[[Queries], T]) -> T:
        """Run ``fn`` on a fresh cursor in the calling thread, interrupted after ``timeout_s``."""
        cur = self.cursor()
        timed_out = threading.Event()

        def interrupt() -> None:
            timed_out.set()
            cur.interrupt()

        timer = threading.Timer(self.timeout_s, interrupt)
        timer.start()
        try:
            return fn(Queries(cur))
        except duckdb.Error as exc:
            if timed_out.is_set():
                raise QueryTimeoutError(f"the page's queries exceeded {self.timeout_s:g} s") from exc
            raise
        finally:
            timer.cancel()
            cur.close()

    async def load(self, fn: Callable[[Queries], T]) -> T:
        """``run`` on the pool, never on the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, self.run, fn)

    async def call(self, fn: Callable[[], T]) -> T:
        """Any blocking call (a review write) on the pool."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
