"""Opening a store: create or check the versioned raw schema, then the derived SQL, with tuned settings."""

from __future__ import annotations

from pathlib import Path

import duckdb

from otel_agent.errors import SchemaVersionError, StoreInUseError
from otel_agent.fold.promoted import PROMOTED_COLUMNS, backfill_sql
from otel_agent.store.prices import load_prices
from otel_agent.store.statements import DERIVED_FOLDERS, SCHEMA_FOLDER, ddl, statement

SCHEMA_VERSION = "3"
"""2: spans gained the promoted columns run_id, record_kind, record_id, record_ref (fold/promoted.py).
3: the tables written with each batch for lineage lookups: lineage_keys and parsed_retrieval_documents
(store/schema/060_lineage_keys.sql, 070_retrieval_documents.sql)."""

# Checkpoints run inside the commit that crosses the threshold, so every request waiting on that commit waits
# for it. With DuckDB's default row groups (122,880 rows) a checkpoint rewrites the whole partly filled row group
# and, each time one fills up, does work that grows with the table: measured on 2 cores with 41 k new spans per
# checkpoint, 100–390 ms within a row group and 390 → 800 → 1,120 ms at each full one (bench/checkpoint.py).
# Small row groups make every checkpoint cost only the new data (8,192 rows: a flat ~75 ms per 41 k spans), and
# a small threshold keeps each one short and the not-yet-checkpointed data (held in memory) small.
DEFAULT_CHECKPOINT_THRESHOLD = "32MB"
ROW_GROUP_SIZE = 8192
"""Rows per row group of a store opened for writing (DuckDB's ATTACH option; the default is 122,880)."""

STORE_CATALOG = "otel_agent"
"""A store opened for writing is attached under this name (ATTACH is the only way to set ROW_GROUP_SIZE) and made
the connection's default; cursors need ``store_cursor`` to get the same default."""


def _stored_version(con: duckdb.DuckDBPyConnection) -> str | None:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'otel_agent_meta'"
    ).fetchall()
    if not exists or not exists[0][0]:
        return None
    row = con.execute("SELECT value FROM otel_agent_meta WHERE key = 'schema_version'").fetchall()
    return row[0][0] if row else None


def _migrate_1_to_2(con: duckdb.DuckDBPyConnection) -> None:
    """Add the promoted span columns and fill them from the JSON the rows already hold."""
    for name in PROMOTED_COLUMNS:
        con.execute(f"ALTER TABLE spans ADD COLUMN {name} VARCHAR")
    con.execute(backfill_sql())


def fill_lookup_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Fill parsed_retrieval_documents and lineage_keys from every stored span, by the SQL rules (the fold's
    twins): for stores whose spans got there without the receiver (the 2 → 3 migration, bench stores)."""
    con.execute("INSERT INTO parsed_retrieval_documents SELECT * FROM retrieval_documents_in('spans')")
    con.execute("INSERT INTO lineage_keys SELECT * FROM lineage_keys_of('spans')")  # documents' rows read from it


def _migrate_2_to_3(con: duckdb.DuckDBPyConnection) -> None:
    """Create lineage_keys and parsed_retrieval_documents and fill them from every stored span."""
    for name in ("schema/lineage_keys", "schema/retrieval_documents"):
        con.execute(statement(name))
    for name in ("views/evidence/retrieval_documents", "views/evidence/lineage_keys"):  # the rules, as table macros
        con.execute(statement(name))
    fill_lookup_tables(con)


MIGRATIONS = {"1": ("2", _migrate_1_to_2), "2": ("3", _migrate_2_to_3)}
"""stored version → (next version, step). Applied in one transaction when a store is opened for writing."""


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Bring a store of an older schema version up to ``SCHEMA_VERSION`` (no-op when it is current)."""
    version = _stored_version(con)
    if version == SCHEMA_VERSION or version not in MIGRATIONS:
        return
    con.execute("BEGIN")
    try:
        while version in MIGRATIONS:
            version, step = MIGRATIONS[version]
            step(con)
        con.execute("UPDATE otel_agent_meta SET value = ? WHERE key = 'schema_version'", [version])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def check_version(con: duckdb.DuckDBPyConnection, path: str | Path, *, read_only: bool = True) -> bool:
    """True when the file already holds our schema; raise when it holds another version or other data."""
    version = _stored_version(con)
    if version is None:
        others = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
        if others and others[0][0]:
            raise SchemaVersionError(f"{path} is a DuckDB file with tables but not an otel_agent store")
        return False
    if version in MIGRATIONS and not read_only:
        return True  # open_store migrates it
    if version != SCHEMA_VERSION:
        raise version_mismatch(path, version)
    return True


def version_mismatch(path: str | Path, version: str | None) -> SchemaVersionError:
    """The error for a store of another schema version, saying how to migrate it where a migration exists."""
    hint = (
        "Open it once for writing (e.g. `otel-agent serve --db PATH`) to migrate it."
        if version in MIGRATIONS
        else "Open it with the otel_agent release that wrote it, or start a new file."
    )
    return SchemaVersionError(
        f"{path} has otel_agent schema version {version}; this otel_agent reads version {SCHEMA_VERSION}. " + hint
    )


def apply_derived(con: duckdb.DuckDBPyConnection) -> None:
    for folder in DERIVED_FOLDERS:
        for stmt in ddl(folder):
            con.execute(stmt.sql)
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
    if path == ":memory:":
        con = duckdb.connect(path, config=config)
    else:
        con = duckdb.connect(":memory:", config=config)
        try:
            con.execute(f"ATTACH ? AS {STORE_CATALOG} (ROW_GROUP_SIZE {int(ROW_GROUP_SIZE)})", [path])
            con.execute(f"USE {STORE_CATALOG}")
        except duckdb.ResourceInUseException as exc:
            con.close()
            raise StoreInUseError(
                f"{path} is already open for writing in this process (a receiver or a DuckDBSpanExporter holds "
                "it): query it through that (e.g. the receiver's query API), or close it first"
            ) from exc
        except BaseException:
            con.close()
            raise
    try:
        existed = check_version(con, path, read_only=False)
        migrate(con)
        con.execute("BEGIN")
        for stmt in ddl(SCHEMA_FOLDER):
            con.execute(stmt.sql)
        if not existed:
            con.execute("INSERT INTO otel_agent_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        apply_derived(con)
        con.execute("COMMIT")
    except BaseException:
        con.close()
        raise
    return con


def store_cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor of ``con`` whose default database is the store (a new cursor starts in DuckDB's default one)."""
    cur = con.cursor()
    attached = cur.execute(
        "SELECT count(*) FROM duckdb_databases() WHERE database_name = ?", [STORE_CATALOG]
    ).fetchall()[0][0]
    if attached:
        cur.execute(f"USE {STORE_CATALOG}")
    return cur
