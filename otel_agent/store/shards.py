"""Querying several stores (shards written by receivers behind a load-balancing Collector) as one.

Each shard is attached read-only; an in-memory database gets one view per raw table that unions the
shards, and then the derived SQL on top, so every view gives the rows one store fed the same input would
(provided each item landed in exactly one shard, which the Collector's ``load_balancing`` exporter does:
it routes every span of a trace to the same receiver and never re-routes a retry).

The shard files must not be held by a running receiver: DuckDB lets one process open a file while another
writes it only if that process is the writer. Stop the receivers first (they checkpoint on stop), or
query each live receiver through its own query API.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from otel_agent.errors import OtelAgentError, SchemaVersionError
from otel_agent.store.database import SCHEMA_VERSION, apply_derived, version_mismatch

RAW_TABLES = (
    "spans",
    "span_events",
    "span_links",
    "logs",
    "metric_points",
    "lineage_keys",
    "parsed_retrieval_documents",
)
"""Tables the receiver writes (the OTLP data and what it writes with it for lookups), unioned over the shards."""
META_TABLE = "otel_agent_meta"
PRODUCT_TABLES = ("reviews", "trusted_writers")
"""Tables the product itself writes (append-only), created by the derived SQL; a review lands in the one
shard whose receiver (or file) took it, so merged queries see the union."""


class ShardAttachError(OtelAgentError):
    """A shard could not be attached (missing, given twice, or held by a running receiver)."""


def _alias(i: int) -> str:
    return f"shard{i}"


def _check_shard(con: duckdb.DuckDBPyConnection, alias: str, path: str) -> None:
    """The attached ``alias`` is an otel_agent store of this schema version with every raw table.

    ``information_schema`` and unqualified names span every attached database, so the check is scoped to
    the shard's own catalog (``database.check_version`` assumes a connection to one file).
    """
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'", [alias]
        ).fetchall()
    }
    if META_TABLE not in tables:
        raise SchemaVersionError(f"{path} is not an otel_agent store (no {META_TABLE} table)")
    row = con.execute(f"SELECT value FROM {alias}.main.{META_TABLE} WHERE key = 'schema_version'").fetchall()
    version = row[0][0] if row else None
    if version != SCHEMA_VERSION:
        raise version_mismatch(path, version)
    missing = [t for t in RAW_TABLES if t not in tables]
    if missing:
        raise SchemaVersionError(f"{path} lacks the raw tables {', '.join(missing)}")


def _attach(con: duckdb.DuckDBPyConnection, alias: str, path: str) -> None:
    try:
        con.execute(f"ATTACH ? AS {alias} (READ_ONLY)", [path])
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            held = Path(path + ".receiver.json")
            hint = f" (a receiver announces itself in {held})" if held.exists() else ""
            raise ShardAttachError(
                f"{path} is held by another process, most likely a running receiver{hint}: stop it before "
                "querying shards together, or query that receiver alone (otel-agent sql --db PATH)"
            ) from exc
        raise ShardAttachError(f"cannot attach {path}: {exc}") from exc
    except duckdb.Error as exc:
        raise ShardAttachError(f"cannot attach {path}: {exc}") from exc


def union_sql(table: str, n: int) -> str:
    """The view body that unions ``table`` over ``n`` attached shards (by column name)."""
    return " UNION ALL BY NAME ".join(f"SELECT * FROM {_alias(i)}.main.{table}" for i in range(n))


def _tables_in_every_shard(con: duckdb.DuckDBPyConnection, n: int) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND database_name LIKE 'shard%' "
        "GROUP BY table_name HAVING count(DISTINCT database_name) = ?",
        [n],
    ).fetchall()
    return {r[0] for r in rows}


def attach_shards(paths: list[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with each path attached read-only and the raw tables and derived SQL over all."""
    seen: dict[str, str] = {}
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            raise ShardAttachError(f"{path} is given twice (as {seen[real]}): its rows would be counted twice")
        seen[real] = path
    con = duckdb.connect(":memory:")
    try:
        for i, path in enumerate(paths):
            _attach(con, _alias(i), path)
            _check_shard(con, _alias(i), path)
        for table in RAW_TABLES:
            con.execute(f"CREATE VIEW {table} AS {union_sql(table, len(paths))}")
        # The store's facts (schema version); the same in every shard, checked above.
        con.execute(f"CREATE VIEW {META_TABLE} AS SELECT * FROM {_alias(0)}.main.{META_TABLE}")
        present = _tables_in_every_shard(con, len(paths))
        for table in PRODUCT_TABLES:
            if table in present:  # materialised, so the derived SQL's CREATE TABLE IF NOT EXISTS keeps it
                con.execute(f"CREATE TABLE {table} AS {union_sql(table, len(paths))}")
        apply_derived(con)
    except BaseException:
        con.close()
        raise
    return con
