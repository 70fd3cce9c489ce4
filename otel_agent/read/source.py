"""Where the read layer's queries run: a ``Source`` answers SQL over the public views, whichever way the store
is reached.

- ``CursorSource``: a DuckDB cursor (the console's page jobs, ``otel-agent ui``, the CLI and MCP over closed
  files, the receiver's own ``/mcp``). It can be prepared with a *scope* (``read/sql/run_scope.sql``: temporary
  tables and macros of that cursor only), which makes the pages of a large store cheap.
- ``RemoteSource``: a running receiver's ``POST /v1/query`` (the CLI when a receiver holds the file, ``otel-agent
  mcp --receiver URL``). It runs single SELECTs only, so it has no scopes: the read functions then ask the same
  views without the cursor-local shortcuts, and get the same rows.

Queries name their parameters (``$run_id``); a remote source sends them positionally (``$1``…), converted with
DuckDB's own tokenizer so a ``$`` inside a string or a comment is never touched. Results are ``Table``: columns,
DuckDB types, Python values (as ``fetchall`` gives them, whichever path they took) and whether a cap cut them.
"""

from __future__ import annotations

import functools
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import duckdb

from otel_agent.errors import QueryTimeoutError
from otel_agent.query.readonly import DEFAULT_MAX_ROWS, QueryResult

Params = dict[str, Any] | list[Any] | None


@dataclass
class Table:
    """Rows of one query: ``columns`` and their DuckDB ``types``, ``rows`` as tuples; ``truncated`` when a row
    or byte cap cut them (``truncated_by``: ``"rows"`` or ``"bytes"``, and the sentence ``truncated_reason``)."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    truncated_reason: str = ""
    truncated_by: str = ""

    def dicts(self) -> list[dict[str, Any]]:
        """The rows as dicts by column name (a fresh list of fresh dicts: callers may change them)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    @classmethod
    def of(cls, result: QueryResult) -> Table:
        return cls(
            list(result.columns), list(result.types), list(result.rows), result.truncated,
            result.truncated_reason, result.truncated_by,
        )  # fmt: skip

    def with_rows(self, columns: list[str], types: list[str], rows: list[tuple[Any, ...]]) -> Table:
        """Another shape of the same result (same truncation)."""
        return Table(columns, types, rows, self.truncated, self.truncated_reason, self.truncated_by)


@functools.cache
def named(name: str) -> str:
    """The text of the named query ``otel_agent/read/sql/<name>.sql``."""
    path = resources.files("otel_agent.read").joinpath("sql", f"{name}.sql")
    return path.read_text(encoding="utf-8")


def query_names() -> list[str]:
    """Every named query (for the test that prepares each one against a store)."""
    folder = resources.files("otel_agent.read").joinpath("sql")
    return sorted(p.name.removesuffix(".sql") for p in folder.iterdir() if p.name.endswith(".sql"))


def sql_of(query: str) -> str:
    """``query`` is a named query (a bare name) or SQL text."""
    return named(query) if query.isidentifier() else query


def positional(sql: str, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """``sql`` with each ``$name`` parameter as ``$k`` (the same name: the same number), and the values in that
    order. Only ``$`` operator tokens followed directly by a name (an identifier or a keyword) are parameters
    (DuckDB's tokenizer: strings and comments are single tokens)."""
    tokens = duckdb.tokenize(sql)
    order: dict[str, int] = {}
    out: list[str] = []
    last = 0
    for i, (start, kind) in enumerate(tokens):
        if kind != duckdb.token_type.operator or sql[start] != "$" or i + 1 >= len(tokens):
            continue
        nstart, nkind = tokens[i + 1]
        end = tokens[i + 2][0] if i + 2 < len(tokens) else len(sql)
        name = sql[nstart:end].strip()
        # $limit, $desc: names that are keywords too
        named_token = nkind in (duckdb.token_type.identifier, duckdb.token_type.keyword)
        if nstart != start + 1 or not named_token or name not in params:
            continue
        number = order.setdefault(name, len(order) + 1)
        out.append(sql[last:start])
        out.append(f"${number}")
        last = nstart + len(name)
    out.append(sql[last:])
    return "".join(out), [params[name] for name in order]


class Source(ABC):
    """Runs the read layer's SELECTs somewhere; see the module's docstring."""

    can_scope = False

    @abstractmethod
    def table(self, query: str, params: Params = None, *, max_rows: int = DEFAULT_MAX_ROWS) -> Table:
        """The rows of one SELECT (a named query or SQL text), at most ``max_rows``."""

    def rows(self, query: str, params: Params = None, *, max_rows: int = DEFAULT_MAX_ROWS) -> list[dict[str, Any]]:
        return self.table(query, params, max_rows=max_rows).dicts()

    def one(self, query: str, params: Params = None) -> dict[str, Any] | None:
        found = self.rows(query, params, max_rows=1)
        return found[0] if found else None

    def scope(self, name: str, **variables: Any) -> bool:
        """Prepare this source with the script ``read/sql/<name>.sql`` (``variables`` as DuckDB variables); False
        where a source cannot (a receiver's query API runs single SELECTs): the caller reads unscoped."""
        return False


@dataclass
class CursorSource(Source):
    """A DuckDB cursor (or connection); ``timeout_s`` interrupts a query that runs longer (None: the caller
    bounds it, as the console's store does)."""

    cursor: duckdb.DuckDBPyConnection
    timeout_s: float | None = None
    con: duckdb.DuckDBPyConnection | None = None
    """The connection the cursor belongs to, for untrusted SQL (``read.query``: the query API's sandbox runs it
    on a fresh cursor of its own); None: this source runs the read layer's own queries only."""
    can_scope: bool = field(default=True, init=False)

    def table(self, query: str, params: Params = None, *, max_rows: int = DEFAULT_MAX_ROWS) -> Table:
        sql = sql_of(query)
        timer = None
        timed_out = threading.Event()
        if self.timeout_s is not None:

            def interrupt() -> None:
                timed_out.set()
                self.cursor.interrupt()

            timer = threading.Timer(self.timeout_s, interrupt)
            timer.start()
        try:
            rel = self.cursor.execute(sql, params or [])
            columns = [d[0] for d in rel.description or []]
            types = [str(d[1]) for d in rel.description or []]
            rows = rel.fetchmany(max_rows + 1) if columns else []
        except duckdb.Error as exc:
            if timed_out.is_set():
                raise QueryTimeoutError(f"a query exceeded its time limit of {self.timeout_s:g} s") from exc
            raise
        finally:
            if timer is not None:
                timer.cancel()
        cut = len(rows) > max_rows
        reason = f"the result has more than the row cap of {max_rows} rows" if cut else ""
        return Table(columns, types, rows[:max_rows], cut, reason, "rows" if cut else "")

    def scope(self, name: str, **variables: Any) -> bool:
        for key, value in variables.items():
            self.cursor.execute(f"SET VARIABLE {key} = $value", {"value": value})
        self.cursor.execute(named(name))
        return True


@dataclass
class RemoteSource(Source):
    """A receiver's query API (``query.api_client.ReceiverClient``): its sandbox, caps and time limit apply."""

    client: Any

    def table(self, query: str, params: Params = None, *, max_rows: int = DEFAULT_MAX_ROWS) -> Table:
        sql = sql_of(query)
        values: list[Any]
        if isinstance(params, dict):
            sql, values = positional(sql, params)
        else:
            values = list(params or [])
        return Table.of(self.client.query(sql, [_json_param(v) for v in values], max_rows=max_rows))


def _json_param(value: Any) -> Any:
    """A parameter as the query API carries it (a JSON value): times as ISO text, which the queries cast."""
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ")
    if isinstance(value, (list, tuple)):
        return [_json_param(v) for v in value]
    return value


JSON_PAGE_ROWS = 5_000


def json_rows(
    src: Source, sql: str, params: Params = None, *, order_by: str, limit: int | None = None,
    page_rows: int = JSON_PAGE_ROWS,
) -> list[dict[str, Any]]:  # fmt: skip
    """Rows of ``sql`` as plain JSON values (DuckDB renders each row: ``to_json``), ordered by ``order_by``
    (which must make the order total), read in pages (a receiver caps the rows and bytes of one answer); all
    of them, or the first ``limit``. The exports read this way, so a file and a receiver give the same bytes."""
    import json

    from otel_agent.errors import OtelAgentError

    out: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = page_rows if limit is None else min(page_rows, limit - len(out))
        paged = f"SELECT to_json(q)::VARCHAR AS row FROM ({sql}) q ORDER BY {order_by} LIMIT {page} OFFSET {offset}"
        result = src.table(paged, params, max_rows=page)
        out.extend(json.loads(r[0]) for r in result.rows)
        if result.truncated_by == "bytes" and not result.rows:
            raise OtelAgentError(f"one row is larger than the receiver's byte cap: {result.truncated_reason}")
        # A page cut at the receiver's byte cap is not the end: the next page starts after its last row.
        if (len(result.rows) < page and result.truncated_by != "bytes") or (limit is not None and len(out) >= limit):
            return out
        offset += len(result.rows)
