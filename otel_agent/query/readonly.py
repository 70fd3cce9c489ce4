"""Running untrusted read-only SQL: an allow-list of statements, no file access, a deadline, row and byte caps.

Guards, in the manner of datasette, none of them a regex:

- the statement type is checked by DuckDB's own parser (``extract_statements``): SELECT, or EXPLAIN of a SELECT
  (EXPLAIN ANALYZE runs the statement it explains, so what it explains is checked too);
- DuckDB's own tokenizer finds the names a statement uses, and a few functions are refused by name
  (``REFUSED_FUNCTIONS``): the ones that write (``checkpoint()``), reveal the store's file path
  (``duckdb_databases()``, settings), or run SQL text no guard has seen (``query('…')``);
- the connection itself has external access disabled and its configuration locked (``lock_down``), so even an
  allowed SELECT cannot call ``read_csv('/etc/passwd')``, and the statement runs in a READ ONLY transaction.

Results are fetched as Arrow record batches and counted, so a huge result is cut at the row or byte cap after
at most one batch more than the cap, never built in full (issue 11, item 5). The rows travel as Arrow too
(``to_ipc`` / ``from_ipc``) and become Python values in exactly one place, ``rows_of``, whichever path they took:
``otel-agent sql`` prints the same bytes live and from the file.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from otel_agent.errors import QueryRejectedError, QueryTimeoutError
from otel_agent.store.database import reading_cursor

ALLOWED_TYPES = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})

DEFAULT_MAX_ROWS = 10_000
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_TIMEOUT_S = 10.0
# Rows per fetched Arrow batch: DuckDB's own vector size, so a batch is what DuckDB produced anyway.
BATCH_ROWS = 2048

_WRITES = "writes the store; the query API runs reads only"
_PATHS = "reveals file paths of the store"
_DYNAMIC = "runs SQL text that the statement check cannot see"
# name → why it is refused. Names are matched as identifiers anywhere in the statement (quoted or not,
# schema-qualified or not); ``_CALL_ONLY`` names only when called, since they are also common column names.
# tests/query/test_guard.py calls every argument-less table function and every system view of the running
# DuckDB and fails if one reveals the store's path, so a DuckDB upgrade that adds one is noticed.
REFUSED_FUNCTIONS: dict[str, str] = {
    "checkpoint": _WRITES,
    "force_checkpoint": _WRITES,
    "vacuum": _WRITES,
    "duckdb_databases": _PATHS,
    "pragma_database_list": _PATHS,
    "duckdb_settings": _PATHS,
    "pg_settings": _PATHS,
    "current_setting": _PATHS,
    "duckdb_temporary_files": _PATHS,
    "duckdb_extensions": _PATHS,
    "duckdb_external_file_cache": _PATHS,
    "duckdb_logs": _PATHS,
    "duckdb_logs_parsed": _PATHS,
    "duckdb_log_contexts": _PATHS,
    "duckdb_secrets": _PATHS,
    "which_secret": _PATHS,
    "query": _DYNAMIC,
    "query_table": _DYNAMIC,
    "json_execute_serialized_sql": _DYNAMIC,
}
_CALL_ONLY = frozenset({"query", "query_table", "vacuum", "checkpoint"})
_NAME_TOKENS = (duckdb.token_type.identifier, duckdb.token_type.keyword)


@dataclass
class QueryResult:
    """A result as Arrow (``table``); ``rows`` are its Python values, made once, by ``rows_of``."""

    columns: list[str]
    types: list[str]
    table: pa.Table
    truncated: bool = False
    # "" or a sentence naming the cap that cut the result (rows or bytes).
    truncated_reason: str = ""
    truncated_by: str = field(default="")  # "", "rows" or "bytes"

    @functools.cached_property
    def rows(self) -> list[tuple[Any, ...]]:
        """The result's Python values, converted on first use."""
        return rows_of(self.table)

    @classmethod
    def of_rows(
        cls, columns: list[str], types: list[str], rows: list[tuple[Any, ...]], truncated: bool = False
    ) -> QueryResult:
        """A result made of Python rows (a command reshaping another result); ``table`` is left empty."""
        result = cls(columns, types, pa.table({}), truncated)
        result.__dict__["rows"] = rows  # the cached_property's slot
        return result


def rows_of(table: pa.Table) -> list[tuple[Any, ...]]:
    """Python values of an Arrow result, as DuckDB itself gives them (``fetchall``).

    The batches come from DuckDB with ``arrow_lossless_conversion`` on (HUGEINT, UUID, JSON keep their DuckDB
    types as Arrow extension types), so reading them back through DuckDB gives the values a direct ``fetchall``
    would have: ints stay ints inside lists and structs, timestamps stay datetimes, decimals Decimals.
    """
    if table.num_columns == 0 or table.num_rows == 0:
        return []
    # Positional names: DuckDB allows duplicate and empty column names, Arrow import does not care for them.
    table = table.rename_columns([f"c{i}" for i in range(table.num_columns)])
    con = duckdb.connect()
    try:
        return con.from_arrow(table).fetchall()
    finally:
        con.close()


def to_ipc(table: pa.Table) -> bytes:
    """One Arrow IPC stream (schema, then the record batches)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes) -> pa.Table:
    """The table of one Arrow IPC stream (the reverse of ``to_ipc``)."""
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """Disable every SQL path to the file system and freeze settings, for the life of the database.

    Applied once to the receiver's database (its writer needs no SQL-level file access: batches arrive as
    registered Arrow tables) and to every read-only connection the CLI opens. Arrow export is made lossless
    first (see ``rows_of``): the setting cannot change after the lock.
    """
    con.execute("SET arrow_lossless_conversion = true")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _tokens(sql: str) -> list[tuple[str, Any]]:
    """(text, type) of every token but comments, by DuckDB's tokenizer."""
    try:
        spans = duckdb.tokenize(sql)
    except Exception as exc:  # the tokenizer raises RuntimeError-likes on some malformed input
        raise QueryRejectedError(f"cannot parse query: {exc}") from exc
    out = []
    for i, (start, kind) in enumerate(spans):
        end = spans[i + 1][0] if i + 1 < len(spans) else len(sql)
        if kind != duckdb.token_type.comment:
            out.append((sql[start:end].strip(), kind))
    return out


def _name(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    return text.lower()


def _check_names(tokens: list[tuple[str, Any]]) -> None:
    for i, (text, kind) in enumerate(tokens):
        if kind not in _NAME_TOKENS:
            continue
        name = _name(text)
        why = REFUSED_FUNCTIONS.get(name)
        if why is None:
            continue
        called = i + 1 < len(tokens) and tokens[i + 1][0].startswith("(")
        if name in _CALL_ONLY and not called:
            continue
        raise QueryRejectedError(f"{name}{'()' if called else ''} is not allowed in the query API: it {why}")


def _explained(sql: str, tokens: list[tuple[str, Any]]) -> str:
    """The statement an EXPLAIN [ANALYZE] [(options)] explains."""
    i = 1  # tokens[0] is EXPLAIN
    if i < len(tokens) and tokens[i][0].lower() in ("analyze", "analyse"):
        i += 1
    if i < len(tokens) and tokens[i][0].startswith("("):
        depth = 0
        while i < len(tokens):
            depth += tokens[i][0].count("(") - tokens[i][0].count(")")
            i += 1
            if depth <= 0:
                break
    rest = " ".join(text for text, _ in tokens[i:])
    return rest


def _first_word(tokens: list[tuple[str, Any]]) -> str:
    return tokens[0][0].upper() if tokens else ""


def check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse (``QueryRejectedError``, with a one-line reason) anything but one read statement."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRejectedError(f"cannot parse query: {exc}") from exc
    if len(statements) != 1:
        raise QueryRejectedError(f"exactly one statement is allowed, got {len(statements)}")
    tokens = _tokens(sql)
    kind = statements[0].type
    if kind not in ALLOWED_TYPES:
        word = _first_word(tokens)
        also = f" ({word})" if word and word != kind.name else ""
        raise QueryRejectedError(f"only read statements (SELECT, EXPLAIN SELECT) are allowed, not {kind.name}{also}")
    if kind == duckdb.StatementType.EXPLAIN:
        try:
            inner = con.extract_statements(_explained(sql, tokens))
        except duckdb.Error as exc:
            raise QueryRejectedError(f"cannot parse the explained statement: {exc}") from exc
        if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
            what = inner[0].type.name if len(inner) == 1 else f"{len(inner)} statements"
            raise QueryRejectedError(f"EXPLAIN of read-only statements (SELECT) only, not of {what}")
    _check_names(tokens)


def _fit(batch: pa.RecordBatch, budget: int) -> pa.RecordBatch:
    """The longest prefix of ``batch`` whose Arrow size is at most ``budget`` bytes (binary search)."""
    lo, hi = 0, batch.num_rows
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if batch.slice(0, mid).nbytes <= budget:
            lo = mid
        else:
            hi = mid - 1
    return batch.slice(0, lo)


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any] | None = None,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    deadline: float | None = None,
) -> QueryResult:
    """Run one read statement on a fresh cursor of ``con``: at most ``max_rows`` rows and ``max_bytes`` bytes
    (Arrow size; None: no byte cap), interrupted at ``deadline`` (``time.monotonic()``; default: now +
    ``timeout_s``). Raises ``QueryRejectedError`` or ``QueryTimeoutError``."""
    if deadline is None:
        deadline = time.monotonic() + timeout_s
    with reading_cursor(con) as cur:  # a receiver with an archive: live ∪ archive
        check_statement(cur, sql)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise QueryTimeoutError(f"query exceeded its time limit of {timeout_s:g} s before it could start")
        timed_out = threading.Event()

        def interrupt() -> None:
            timed_out.set()
            cur.interrupt()

        timer = threading.Timer(remaining, interrupt)
        # A read-only transaction, rolled back afterwards: a second guard behind the statement check.
        cur.execute("BEGIN TRANSACTION READ ONLY")
        timer.start()
        try:
            return _fetch(cur, sql, params or [], max_rows, max_bytes)
        except (duckdb.Error, pa.ArrowException) as exc:
            if timed_out.is_set():
                raise QueryTimeoutError(f"query exceeded its time limit of {timeout_s:g} s") from exc
            raise QueryRejectedError(str(exc).strip() or type(exc).__name__) from exc
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # parameters DuckDB cannot bind
            raise QueryRejectedError(f"invalid query parameters: {exc}") from exc
        finally:
            timer.cancel()
            with contextlib.suppress(duckdb.Error):  # closing the cursor (the block's end) ends it anyway
                cur.execute("ROLLBACK")


def _fetch(
    cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any], max_rows: int, max_bytes: int | None
) -> QueryResult:
    # A relation, not ``execute``: ``execute`` materialises the whole result before the first batch is read.
    rel = cur.sql(sql, params=params or None)
    if rel is None:
        return QueryResult([], [], pa.table({}))
    columns = list(rel.columns)
    types = [str(t) for t in rel.types]
    reader = rel.to_arrow_reader(BATCH_ROWS)
    batches: list[pa.RecordBatch] = []
    rows = size = 0
    by = ""
    for batch in reader:
        if batch.num_rows == 0:
            continue
        if rows >= max_rows:
            by = "rows"  # one more row exists beyond the cap
            break
        if rows + batch.num_rows > max_rows:
            batch = batch.slice(0, max_rows - rows)
            by = "rows"
        if max_bytes is not None and size + batch.nbytes > max_bytes:
            batch = _fit(batch, max_bytes - size)
            by = "bytes"
        if batch.num_rows:
            batches.append(batch)
            rows += batch.num_rows
            size += batch.nbytes
        if by == "bytes":
            break
    reader.close()
    table = pa.Table.from_batches(batches, schema=reader.schema)
    reason = ""
    if by == "rows":
        reason = f"the result has more than the row cap of {max_rows} rows"
    elif by == "bytes":
        reason = f"the result is larger than the byte cap of {max_bytes} bytes; {rows} rows fit"
    return QueryResult(columns, types, table, bool(by), reason, by)
