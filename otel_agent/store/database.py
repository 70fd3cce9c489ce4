"""Opening a store: create or check the versioned raw schema, then the derived SQL, with tuned settings."""

from __future__ import annotations

from pathlib import Path

import duckdb

from otel_agent.errors import SchemaVersionError
from otel_agent.store.prices import load_prices
from otel_agent.store.sql_files import ordered_sql

SCHEMA_VERSION = "1"

# A larger checkpoint threshold keeps checkpoints off the ingest path (REFERENCE §5: 16 MB default cost
# 26 µs/span with 1.7 s worst commits; 256 MB gave 8.9 µs/span, at the price of a longer WAL replay).
DEFAULT_CHECKPOINT_THRESHOLD = "256MB"

DERIVED_FOLDERS: list[str] = ["views/runs", "views/evidence"]
"""Folders of derived SQL (views, macros) applied after the raw schema, each with its own manifest."""


def _stored_version(con: duckdb.DuckDBPyConnection) -> str | None:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'otel_agent_meta'"
    ).fetchall()
    if not exists or not exists[0][0]:
        return None
    row = con.execute("SELECT value FROM otel_agent_meta WHERE key = 'schema_version'").fetchall()
    return row[0][0] if row else None


def check_version(con: duckdb.DuckDBPyConnection, path: str | Path) -> bool:
    """True when the file already holds our schema; raise when it holds another version or other data."""
    version = _stored_version(con)
    if version is None:
        others = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
        if others and others[0][0]:
            raise SchemaVersionError(f"{path} is a DuckDB file with tables but not an otel_agent store")
        return False
    if version != SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path} has otel_agent schema version {version}; "
            f"this otel_agent reads version {SCHEMA_VERSION}. "
            "Open it with the otel_agent release that wrote it, or start a new file."
        )
    return True


def apply_derived(con: duckdb.DuckDBPyConnection) -> None:
    for folder in DERIVED_FOLDERS:
        for _name, sql in ordered_sql(folder):
            con.execute(sql)
    load_prices(con)  # the model price table is data (views/runs/000_price_table.sql, store/prices/)


def open_store(
    path: str | Path,
    *,
    read_only: bool = False,
    checkpoint_threshold: str = DEFAULT_CHECKPOINT_THRESHOLD,
    memory_limit: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) an otel_agent DuckDB file and return a connection.

    Raises ``SchemaVersionError`` for a file of another schema version instead of touching it.
    """
    path = str(path)
    if read_only:
        con = duckdb.connect(path, read_only=True)
        if not check_version(con, path):
            con.close()
            raise SchemaVersionError(f"{path} is not an otel_agent store")
        return con
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    config = {"checkpoint_threshold": checkpoint_threshold}
    if memory_limit:
        config["memory_limit"] = memory_limit
    con = duckdb.connect(path, config=config)
    try:
        existed = check_version(con, path)
        con.execute("BEGIN")
        for _name, sql in ordered_sql("schema"):
            con.execute(sql)
        if not existed:
            con.execute("INSERT INTO otel_agent_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        apply_derived(con)
        con.execute("COMMIT")
    except BaseException:
        con.close()
        raise
    return con
