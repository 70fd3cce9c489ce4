"""Reaching a store for reading: through a live receiver's query API, or by opening the file read-only.

DuckDB lets only one process open a file while a writer has it (REFERENCE §5), so when a receiver holds the
file, reads go through its ``POST /v1/query``. The receiver leaves ``<db>.receiver.json`` while it runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import requests

from otel_agent.config import DEFAULT_DB  # noqa: F401 (the one default, re-exported for callers of this module)
from otel_agent.errors import OtelAgentError, QueryRejectedError
from otel_agent.query.readonly import QueryResult, lock_down, run_query
from otel_agent.store.database import check_version


class ReceiverUnreachableError(OtelAgentError):
    """The receiver named for a query did not answer."""


class StoreNotFoundError(OtelAgentError):
    """The DuckDB file to read does not exist."""


def live_receiver(db: str) -> str | None:
    """The HTTP address of the receiver holding ``db``, if one is running."""
    path = Path(str(db) + ".receiver.json")
    try:
        info = json.loads(path.read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    return str(info["http"])


def query_receiver(
    url: str, sql: str, params: list[Any] | None = None, token: str | None = None, max_rows: int = 0
) -> QueryResult:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"sql": sql, "params": params or [], "maxRows": max_rows}
    try:
        resp = requests.post(url.rstrip("/") + "/v1/query", data=json.dumps(body), headers=headers, timeout=120)
    except requests.RequestException as exc:
        raise ReceiverUnreachableError(f"receiver {url} did not answer: {exc}") from exc
    doc = resp.json() if resp.content else {}
    if resp.status_code != 200:
        raise QueryRejectedError(f"receiver answered {resp.status_code}: {doc.get('message', resp.text)}")
    columns = [c.get("name", "") for c in doc.get("columns", [])]
    types = [c.get("type", "") for c in doc.get("columns", [])]
    rows = [
        tuple(_restore_int(v, t) for v, t in zip(r.get("values", []), types, strict=False)) for r in doc.get("rows", [])
    ]
    return QueryResult(columns, types, rows, bool(doc.get("truncated", False)))


_INTEGER_TYPES = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"}
    | {"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"}
)


def _restore_int(value: Any, type_: str) -> Any:
    """An integer column's value as an int again: protobuf's JSON mapping sends every number as a double
    (``10`` arrives as ``10.0``) and integers beyond 2^53 as strings, so the CLI would print ``10.0`` live
    and ``10`` from the file."""
    if type_ not in _INTEGER_TYPES:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def open_readonly(dbs: list[str]) -> duckdb.DuckDBPyConnection:
    """A locked-down connection over one store, or several attached read-only and unioned (shards)."""
    for db in dbs:
        if not Path(db).exists():
            raise StoreNotFoundError(f"no DuckDB file at {db}")
    if len(dbs) == 1:
        con = duckdb.connect(dbs[0], read_only=True)
        check_version(con, dbs[0])
        lock_down(con)
        return con
    from otel_agent.store.shards import attach_shards

    con = attach_shards(dbs)
    lock_down(con)
    return con


def run_sql(
    sql: str,
    dbs: list[str],
    *,
    receiver: str | None = None,
    token: str | None = None,
    params: list[Any] | None = None,
    max_rows: int = 10_000,
) -> QueryResult:
    """Run a read query where the data is: a named receiver, the receiver holding the file, or the file."""
    if receiver:
        return query_receiver(receiver, sql, params, token, max_rows)
    if len(dbs) == 1:
        live = live_receiver(dbs[0])
        if live:
            return query_receiver(live, sql, params, token, max_rows)
    con = open_readonly(dbs)
    try:
        return run_query(con, sql, params, max_rows=max_rows)
    finally:
        con.close()
