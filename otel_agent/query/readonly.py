"""Running untrusted read-only SQL: an allow-list of statement types, no file access, a time limit, a row cap.

Two independent guards, in the manner of datasette: the statement types are checked by DuckDB's own parser
(``extract_statements``), not by a regex; and the connection itself has external access disabled and its
configuration locked (see ``lock_down``), so even an allowed SELECT cannot call ``read_csv('/etc/passwd')``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import duckdb

from otel_agent.errors import QueryRejectedError, QueryTimeoutError
from otel_agent.store.database import store_cursor

ALLOWED_TYPES = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})

DEFAULT_MAX_ROWS = 10_000
DEFAULT_TIMEOUT_S = 10.0


@dataclass
class QueryResult:
    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """Disable every SQL path to the file system and freeze settings, for the life of the database.

    Applied once to the receiver's database (its writer needs no SQL-level file access: batches arrive as
    registered Arrow tables) and to every read-only connection the CLI opens.
    """
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRejectedError(f"cannot parse query: {exc}") from exc
    if len(statements) != 1:
        raise QueryRejectedError(f"exactly one statement is allowed, got {len(statements)}")
    kind = statements[0].type
    if kind not in ALLOWED_TYPES:
        raise QueryRejectedError(f"only read statements (SELECT, EXPLAIN) are allowed, not {kind.name}")


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any] | None = None,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> QueryResult:
    """Run one read statement on a fresh cursor of ``con`` and return at most ``max_rows`` rows."""
    cur = store_cursor(con)
    try:
        check_statement(cur, sql)
        timed_out = threading.Event()

        def interrupt() -> None:
            timed_out.set()
            cur.interrupt()

        timer = threading.Timer(timeout_s, interrupt)
        # A read-only transaction, rolled back afterwards: EXPLAIN is allowed, but EXPLAIN ANALYZE executes
        # the statement it explains (DELETE, INSERT, CREATE …), which the statement-type check cannot see.
        cur.execute("BEGIN TRANSACTION READ ONLY")
        timer.start()
        try:
            rel = cur.execute(sql, params or [])
            columns = [d[0] for d in rel.description] if rel.description else []
            types = [str(d[1]) for d in rel.description] if rel.description else []
            rows = rel.fetchmany(max_rows + 1)
        except duckdb.Error as exc:
            if timed_out.is_set():
                raise QueryTimeoutError(f"query exceeded its time limit of {timeout_s:g} s") from exc
            raise QueryRejectedError(str(exc)) from exc
        finally:
            timer.cancel()
            try:
                cur.execute("ROLLBACK")
            except duckdb.Error:
                pass  # closing the cursor below ends the transaction anyway
        truncated = len(rows) > max_rows
        return QueryResult(columns, types, rows[:max_rows], truncated)
    finally:
        cur.close()
