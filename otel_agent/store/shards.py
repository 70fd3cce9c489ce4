"""Reading stores read-only: one file, or several (shards written by receivers behind a load-balancing Collector)
as one, always through this release's derived SQL.

A file whose stored derived SQL is this release's (its fingerprint, ``database.derived_fingerprint``, matches)
is opened read-only as it is. Otherwise — a file written by another release, or several shards — an in-memory
catalog gets one view per schema table over the file(s) attached read-only, and this release's derived SQL on
top. A read-only file cannot be rewritten, so the current views live in that catalog, never in the file: one
file is never read through two different view definitions (docs/schema.md, "Derived SQL and releases"). The
catalog's own ``otel_agent_meta`` says what it presents: this schema version and this release's fingerprint.

Over shards every view gives the rows one store fed the same input would (provided each item landed in exactly
one shard, which the Collector's ``load_balancing`` exporter does: it routes every span of a trace to the same
receiver and never re-routes a retry). A review lands in the one shard whose receiver (or file) took it, so
merged queries see the union of the product tables too.

The files must not be held by a running receiver: DuckDB lets one process open a file while another writes it
only if that process is the writer. Stop the receivers first (they checkpoint on stop), or query each live
receiver through its own query API.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from otel_agent.errors import StoreHeldError, StoreOpenError
from otel_agent.store.database import (
    DUCKDB_CONFIG,
    FINGERPRINT_KEY,
    META_TABLE,
    PRODUCT_TABLES,
    RAW_TABLES,
    SCHEMA_VERSION,
    apply_derived,
    check_store,
    derived_fingerprint,
    store_facts,
    stored_fingerprint,
)
from otel_agent.store.maintained import is_current, reads_maintained_runs
from otel_agent.store.open_errors import check_file, closing_on_failure, open_failure
from otel_agent.store.statements import check_registered, statement

__all__ = ["META_TABLE", "PRODUCT_TABLES", "RAW_TABLES", "ShardAttachError", "attach_shards", "open_read_only"]


class ShardAttachError(StoreOpenError):
    """A shard could not be attached (missing, given twice, or held by a running receiver)."""


def _alias(i: int) -> str:
    return f"shard{i}"


def _attach(con: duckdb.DuckDBPyConnection, alias: str, path: str) -> None:
    try:
        con.execute(f"ATTACH ? AS {alias} (READ_ONLY)", [path])
    except duckdb.Error as exc:
        failure = open_failure(path, exc)
        if isinstance(failure, StoreHeldError):
            raise ShardAttachError(
                f"{failure}: stop it before querying shards together, or query that receiver alone "
                "(otel-agent sql --db PATH)"
            ) from exc
        raise ShardAttachError(str(failure)) from exc


def union_sql(table: str, shards: list[int]) -> str:
    """The view body that unions ``table`` over the attached ``shards`` (by column name)."""
    return " UNION ALL BY NAME ".join(f"SELECT * FROM {_alias(i)}.main.{table}" for i in shards)


def attach_shards(paths: list[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with each path attached read-only, a view per schema table over all of them,
    and this release's derived SQL on top (one path works the same: a file read through the current views)."""
    seen: dict[str, str] = {}
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            raise ShardAttachError(f"{path} is given twice (as {seen[real]}): its rows would be counted twice")
        seen[real] = path
        _check_exists(path)
    con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
    try:
        having: dict[str, list[int]] = {}
        for i, path in enumerate(paths):
            _attach(con, _alias(i), path)
            try:
                tables, version = store_facts(con, _alias(i))
            except duckdb.Error as exc:
                raise ShardAttachError(str(open_failure(path, exc))) from exc
            check_store(path, tables, version, writing=False)
            for table in tables:
                having.setdefault(table, []).append(i)
        for table in RAW_TABLES:
            con.execute(f"CREATE VIEW {table} AS {union_sql(table, having[table])}")
        for table, ddl_name in PRODUCT_TABLES.items():
            if table in having:
                con.execute(f"CREATE VIEW {table} AS {union_sql(table, having[table])}")
            else:  # a version-3 file that never had them: empty, as a new store has them
                con.execute(statement(ddl_name))
        # The catalog's facts: the files read as this schema version, through this release's derived SQL.
        con.execute(statement("schema/meta"))
        con.execute(
            f"INSERT INTO {META_TABLE} VALUES ('schema_version', ?), (?, ?)",
            [SCHEMA_VERSION, FINGERPRINT_KEY, derived_fingerprint()],
        )
        apply_derived(con)
    except BaseException:
        con.close()
        raise
    return con


def _check_exists(path: str) -> None:
    check_file(path)
    if not Path(path).exists():
        raise StoreOpenError(f"cannot open the store {path}: no such file")


def open_read_only(paths: list[str]) -> duckdb.DuckDBPyConnection:
    """A read-only connection over one store or several, through this release's derived SQL.

    One file of this schema version whose fingerprint matches: the file itself, opened read-only. Anything
    else: the in-memory catalog of ``attach_shards``. Raises ``SchemaVersionError`` / ``StoreOpenError``
    (one line naming the file and the cause), never a DuckDB exception.
    """
    check_registered()
    if len(paths) != 1:
        return attach_shards(paths)
    path = paths[0]
    _check_exists(path)
    try:
        con = duckdb.connect(path, read_only=True, config=DUCKDB_CONFIG)
    except duckdb.Error as exc:
        raise open_failure(path, exc) from exc
    with closing_on_failure(con, path):
        tables, version = store_facts(con)
        check_store(path, tables, version, writing=False)
        current = version == SCHEMA_VERSION and stored_fingerprint(con) == derived_fingerprint()
        # a runs view over maintained rows that do not cover every stored row (its writer was killed before it
        # caught up): read the file through the query-time views instead, which are always complete
        current = current and (not reads_maintained_runs(con) or is_current(con))
    if current:
        return con
    con.close()  # another release's views (or none): read it through the current ones
    return attach_shards(paths)
