"""Reaching a store for reading: through a live receiver's query API, or by opening the file read-only.

DuckDB lets only one process open a file while a writer has it (REFERENCE §5), so when a receiver holds the
file, reads go through its ``POST /v1/query`` (``otel_agent.query.api_client``). The receiver leaves
``<db>.receiver.json`` while it runs. Both paths give a ``QueryResult`` made the same way (``readonly.rows_of``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb

from otel_agent.config import DEFAULT_DB  # noqa: F401 (the one default, re-exported for callers of this module)
from otel_agent.errors import OtelAgentError
from otel_agent.query.api_client import ReceiverClient, ReceiverUnreachableError
from otel_agent.query.readonly import DEFAULT_TIMEOUT_S, QueryResult, lock_down, run_query
from otel_agent.store.shards import open_read_only


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
    """One query through a receiver's API (see ``ReceiverClient``)."""
    return ReceiverClient(url, token).query(sql, params, max_rows=max_rows)


def open_readonly(dbs: list[str], archive: str | None = None) -> duckdb.DuckDBPyConnection:
    """A locked-down connection over one store, or several attached read-only and unioned (shards); with an
    ``archive`` (a directory or s3:// URI), raw tables are live ∪ archive."""
    for db in dbs:
        if not Path(db).exists():
            raise StoreNotFoundError(f"no DuckDB file at {db}")
    from otel_agent.lifecycle.reading import open_with_archive

    # an archive: raw tables are live ∪ archive; else through this release's derived SQL, whoever wrote the file
    con = open_with_archive(dbs, archive) if archive else open_read_only(dbs)
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
    timeout_s: float = DEFAULT_TIMEOUT_S,
    archive: str | None = None,
) -> QueryResult:
    """Run a read query where the data is: a named receiver, the receiver holding the file, or the file(s)
    (with ``archive``: live ∪ archive). ``timeout_s`` limits a query on files; a receiver applies its own."""
    if receiver:
        return query_receiver(receiver, sql, params, token, max_rows)
    # A receiver's query API reads its own (local) archive, not one named here: an archive reads the files.
    if len(dbs) == 1 and not archive:
        live = live_receiver(dbs[0])
        if live:
            return query_receiver(live, sql, params, token, max_rows)
    con = open_readonly(dbs, archive)
    try:
        return run_query(con, sql, params, max_rows=max_rows, timeout_s=timeout_s)
    finally:
        con.close()


__all__ = ["ReceiverUnreachableError", "StoreNotFoundError", "live_receiver", "open_readonly", "run_sql"]
