"""Opening a store: create or check the versioned schema, then the derived SQL, with tuned settings.

The schema (``store/schema/``: the raw tables and the product's append-only tables) is versioned and migrated;
the derived SQL (``store/views/``) is applied again at every open for writing, and the store records its
fingerprint, so a reader of another release knows the stored views are not its own (store/shards.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import duckdb

from otel_agent.errors import SchemaVersionError, StoreInUseError
from otel_agent.fold.promoted import PROMOTED_COLUMNS, backfill_sql
from otel_agent.store.open_errors import check_file, closing_on_failure, open_failure
from otel_agent.store.prices import load_prices, shipped_prices_text
from otel_agent.store.readers import readers_of
from otel_agent.store.statements import DERIVED_FOLDERS, SCHEMA_FOLDER, check_registered, ddl, statement

SCHEMA_VERSION = "6"
"""2: spans gained the promoted columns run_id, record_kind, record_id, record_ref (fold/promoted.py).
3: the tables written with each batch for lineage lookups: lineage_keys and parsed_retrieval_documents
(store/schema/060_lineage_keys.sql, 070_retrieval_documents.sql).
4: the product's append-only tables reviews and trusted_writers are part of the schema (store/schema/080_reviews.sql,
090_trusted_writers.sql; the derived SQL created them before), and the store records the fingerprint of the derived
SQL it holds (``FINGERPRINT_KEY``). The version changes because a release that reads version 3 would apply its own
views to the file without updating the fingerprint: it must refuse the file instead.
5: spans, span_events and logs carry ``ingest_seq``, the group commit that stored each row (schema/005_ingest_seq.sql),
which the maintained derived state reads (store/maintained.py).
6: the product's append-only alert tables alert_events and alert_deliveries (store/schema/100_alerts.sql; written
by the receiver's alert evaluator and webhook delivery, otel_agent/alerts/)."""

META_TABLE = "otel_agent_meta"
RAW_TABLES = (
    "spans",
    "span_events",
    "span_links",
    "logs",
    "metric_points",
    "lineage_keys",
    "parsed_retrieval_documents",
)
"""Tables the receiver writes: the OTLP data, and what it writes with each batch for lookups."""
PRODUCT_TABLES = {
    "reviews": "schema/reviews",
    "trusted_writers": "schema/trusted_writers",
    "alert_events": "schema/alerts",
    "alert_deliveries": "schema/alerts",
}
"""Tables the product itself writes (append-only: reviews, writer trust) → the schema statement that creates each.
Their rows are data no view can rebuild, so they are schema, not derived SQL. A test checks that
``schema_tables()`` is exactly ``META_TABLE``, ``RAW_TABLES`` and these."""

FINGERPRINT_KEY = "derived_fingerprint"
"""``otel_agent_meta`` key of the fingerprint (``derived_fingerprint()``) of the derived SQL applied to the file."""

DUCKDB_CONFIG: dict[str, str | bool] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
"""Settings of every connection the store opens: DuckDB would otherwise download an extension to read a foreign
file (a SQLite file given as ``--db``), and otel_agent makes no runtime downloads."""

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
HISTORY_CATALOG = "otel_agent_history"
"""The in-memory catalog of a receiver's live ∪ archive views (``lifecycle.reading.attach_history``)."""


def store_facts(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> tuple[set[str], str | None]:
    """The tables of ``catalog`` (default: the connection's current one) and the schema version it records."""
    if catalog is None:
        catalog = str(con.execute("SELECT current_database()").fetchall()[0][0])
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'", [catalog]
        ).fetchall()
    }
    if META_TABLE not in tables:
        return tables, None
    row = con.execute(f'SELECT value FROM "{catalog}".main.{META_TABLE} WHERE key = ?', ["schema_version"]).fetchall()
    return tables, (row[0][0] if row else None)


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


def _migrate_3_to_4(con: duckdb.DuckDBPyConnection) -> None:
    """Create the product tables where they are missing (a version-3 store opened for writing already has them,
    made by its derived SQL, and keeps their rows: the DDL is ``CREATE TABLE IF NOT EXISTS``)."""
    for name in PRODUCT_TABLES.values():
        con.execute(statement(name))


SEQ_TABLES = ("spans", "span_events", "logs")
"""The raw tables whose rows carry ``ingest_seq`` (schema/005_ingest_seq.sql)."""


def _migrate_4_to_5(con: duckdb.DuckDBPyConnection) -> None:
    """Give the rows of ``SEQ_TABLES`` an ``ingest_seq``: one value per 8,192 stored rows in storage order (so the
    maintained state's first build over them goes in bounded steps), and the sequence starts past them."""
    top = 0
    for table in SEQ_TABLES:
        columns = "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND database_name = current_database()"
        if "ingest_seq" not in {r[0] for r in con.execute(columns, [table]).fetchall()}:
            con.execute(f"ALTER TABLE {table} ADD COLUMN ingest_seq BIGINT")
        con.execute(f"UPDATE {table} SET ingest_seq = rowid // {ROW_GROUP_SIZE} + 1 WHERE ingest_seq IS NULL")
        top = max(top, int(con.execute(f"SELECT coalesce(max(ingest_seq), 0) FROM {table}").fetchall()[0][0]))
    con.execute(f"CREATE SEQUENCE IF NOT EXISTS ingest_seq_gen START WITH {top + 1}")
    for table in SEQ_TABLES:
        con.execute(f"ALTER TABLE {table} ALTER COLUMN ingest_seq SET DEFAULT nextval('ingest_seq_gen')")


def _migrate_5_to_6(con: duckdb.DuckDBPyConnection) -> None:
    """Create the alert tables (empty: alerts start with the first evaluation)."""
    con.execute(statement("schema/alerts"))


MIGRATIONS = {
    "1": ("2", _migrate_1_to_2),
    "2": ("3", _migrate_2_to_3),
    "3": ("4", _migrate_3_to_4),
    "4": ("5", _migrate_4_to_5),
    "5": ("6", _migrate_5_to_6),
}
"""stored version → (next version, step). Applied in one transaction when a store is opened for writing."""


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Bring a store of an older schema version up to ``SCHEMA_VERSION`` (no-op when it is current)."""
    _tables, version = store_facts(con)
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


READABLE_OLDER_VERSIONS = ("3", "4", "5")
"""Older schema versions read read-only without a migration, through this release's views (store/shards.py):
version 3 has every table of version 4 (its product tables made by its derived SQL) and no fingerprint; version 4
lacks only ``ingest_seq``, which no view reads; version 5 lacks only the alert tables, which no view reads (a read
of alerts there finds none: ``read.alerts``)."""


def check_store(path: str | Path, tables: set[str], version: str | None, *, writing: bool) -> bool:
    """Whether the file holds a store (``store_facts``): True for one this release can open (to migrate first,
    when writing an older one), False for an empty new file (when writing). Raises ``SchemaVersionError`` for
    a file of another version, other data, or a store that lacks tables."""
    if version is None:
        if tables - {META_TABLE}:
            raise SchemaVersionError(f"{path} is a DuckDB file with tables but not an otel_agent store")
        if writing:
            return False
        raise SchemaVersionError(f"{path} is not an otel_agent store (no {META_TABLE} table)")
    if writing and version in MIGRATIONS:
        return True  # open_store migrates it
    if version != SCHEMA_VERSION and (writing or version not in READABLE_OLDER_VERSIONS):
        raise version_mismatch(path, version)
    needed = (*RAW_TABLES, *PRODUCT_TABLES) if version == SCHEMA_VERSION else RAW_TABLES
    missing = [t for t in needed if t not in tables]
    if missing:
        raise SchemaVersionError(f"{path} lacks the tables {', '.join(missing)}")
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


@cache
def derived_fingerprint() -> str:
    """sha256 of the derived SQL this release applies (every file of ``DERIVED_FOLDERS``, path and text, in
    order) and of the shipped price table (``store/prices/prices.csv``), as ``sha256:<hex>``. A user price file
    (``OTEL_AGENT_PRICES``) is not part of it: it is the setting of whoever applies the views."""
    digest = hashlib.sha256()
    for folder in DERIVED_FOLDERS:
        for stmt in ddl(folder):
            digest.update(json.dumps([stmt.path, stmt.sql]).encode())
    digest.update(shipped_prices_text().encode())
    return "sha256:" + digest.hexdigest()


def stored_fingerprint(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> str | None:
    """The fingerprint of the derived SQL a store holds (``None``: written before schema version 4, or never
    had its views applied)."""
    table = f"{catalog}.main.otel_agent_meta" if catalog else "otel_agent_meta"
    row = con.execute(f"SELECT value FROM {table} WHERE key = ?", [FINGERPRINT_KEY]).fetchall()
    return row[0][0] if row else None


def set_run_silence(con: duckdb.DuckDBPyConnection, seconds: float) -> None:
    """How long a running run may be silent before ``runs`` shows it abandoned: the store's ``oa_run_silence_s()``
    redefined (views/runs/080_runs.sql; applied when runs are read, so no derived state is rebuilt, and readers of
    the file see the value its receiver was started with)."""
    with store_cursor(con) as cur:
        cur.execute(f"CREATE OR REPLACE MACRO oa_run_silence_s() AS {float(seconds)!r}")


def apply_derived(con: duckdb.DuckDBPyConnection) -> None:
    """Apply the derived SQL (views, macros) of this release over the tables ``con`` names by default."""
    for folder in DERIVED_FOLDERS:
        for stmt in ddl(folder):
            con.execute(stmt.sql)
    load_prices(con)  # the model price table is data (views/runs/000_price_table.sql, store/prices/)


def _record_fingerprint(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("DELETE FROM otel_agent_meta WHERE key = ?", [FINGERPRINT_KEY])
    con.execute("INSERT INTO otel_agent_meta VALUES (?, ?)", [FINGERPRINT_KEY, derived_fingerprint()])


@cache
def schema_tables() -> tuple[str, ...]:
    """The tables the schema creates, in order (``otel_agent_meta`` first): the raw tables, the lookup tables
    and the product tables. Read from the schema itself, applied to an empty in-memory database."""
    con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
    try:
        for stmt in ddl(SCHEMA_FOLDER):
            con.execute(stmt.sql)
        rows = con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_oid").fetchall()
    finally:
        con.close()
    return tuple(r[0] for r in rows)


def open_store(
    path: str | Path,
    *,
    checkpoint_threshold: str = DEFAULT_CHECKPOINT_THRESHOLD,
    memory_limit: str | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) an otel_agent DuckDB file for writing and return a connection (to read one
    through this release's derived SQL: ``shards.open_read_only``, which builds on this module).
    Every refusal is an ``OtelAgentError`` whose message names the file and the cause, and leaves the file as
    it was: ``SchemaVersionError`` (another schema version, or a DuckDB file that is not a store),
    ``StoreInUseError`` (held for writing in this process), ``StoreOpenError`` (anything else: missing,
    corrupted, truncated, another format, not writable, held by another process, a path under a regular file).
    """
    path = str(path)
    check_registered()  # a broken package fails here, before any file is created or opened
    config: dict[str, str | bool] = {**DUCKDB_CONFIG, "checkpoint_threshold": checkpoint_threshold}
    if memory_limit:
        config["memory_limit"] = memory_limit
    if path == ":memory:":
        con = duckdb.connect(path, config=config)
    else:
        check_file(path)
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise open_failure(path, exc) from exc
        con = duckdb.connect(":memory:", config=config)
        with closing_on_failure(con, path):
            try:
                attach_store(con, path)
            except duckdb.ResourceInUseException as exc:
                raise StoreInUseError(
                    f"{path} is already open for writing in this process (a receiver or a DuckDBSpanExporter holds "
                    "it): query it through that (e.g. the receiver's query API), or close it first"
                ) from exc
    with closing_on_failure(con, path):
        tables, version = store_facts(con)
        existed = check_store(path, tables, version, writing=True)
        migrate(con)
        # A file whose derived SQL is this release's (same fingerprint) keeps its views: binding the ~40 files
        # again costs ~1.5 s of CPU on every reopen (a receiver restart, an exporter per process) for nothing.
        derived_current = existed and stored_fingerprint(con) == derived_fingerprint()
        con.execute("BEGIN")
        for stmt in ddl(SCHEMA_FOLDER):
            con.execute(stmt.sql)
        if not existed:
            con.execute("INSERT INTO otel_agent_meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        if derived_current:
            load_prices(con)  # data, and a user price file (OTEL_AGENT_PRICES) is the opener's setting
        else:
            apply_derived(con)
            _record_fingerprint(con)
        con.execute("COMMIT")
    return con


_READING_SETUP: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {}


def on_reading_cursor(
    con: duckdb.DuckDBPyConnection, setup: Callable[[duckdb.DuckDBPyConnection], None] | None
) -> None:
    """Run ``setup`` on every ``reading_cursor`` of ``con`` (None: no more). A receiver with an S3 archive
    registers there the Arrow datasets its views scan: DuckDB sees a registered object on its own cursor only."""
    if setup is None:
        _READING_SETUP.pop(id(con), None)
    else:
        _READING_SETUP[id(con)] = setup


@contextmanager
def reading_cursor(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor for readers (query API, console), closed when the block ends: in ``HISTORY_CATALOG`` when the
    connection has one (a receiver with an archive: raw tables live ∪ archive, ``lifecycle.reading
    .attach_history``), else as ``store_cursor``. The store stays attached while it is open (``store.readers``)."""
    with readers_of(con).reading():
        cur = con.cursor()
        try:
            if _attached(cur, HISTORY_CATALOG):
                cur.execute(f"USE {HISTORY_CATALOG}")
                setup = _READING_SETUP.get(id(con))
                if setup is not None:
                    setup(cur)
            else:
                _use_store(cur)
            yield cur
        finally:
            cur.close()


@contextmanager
def store_cursor(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of ``con`` whose default database is the store (a new cursor starts in DuckDB's default one),
    closed when the block ends. The one way for a thread other than the writer's to read the store beside it:
    the store stays attached while the cursor is open (``store.readers``)."""
    with readers_of(con).reading():
        cur = con.cursor()
        try:
            _use_store(cur)
            yield cur
        finally:
            cur.close()


def _use_store(cur: duckdb.DuckDBPyConnection) -> None:
    if _attached(cur, STORE_CATALOG):
        cur.execute(f"USE {STORE_CATALOG}")


def _attached(cur: duckdb.DuckDBPyConnection, catalog: str) -> bool:
    sql = "SELECT count(*) FROM duckdb_databases() WHERE database_name = ?"
    return bool(cur.execute(sql, [catalog]).fetchall()[0][0])


def attach_store(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Attach the store file at ``path`` as ``STORE_CATALOG`` and make it ``con``'s default: at open, and when
    the writer attaches it again (``store.recycle``)."""
    con.execute(f"ATTACH ? AS {STORE_CATALOG} (ROW_GROUP_SIZE {int(ROW_GROUP_SIZE)})", [path])
    con.execute(f"USE {STORE_CATALOG}")


def store_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The file of the store ``con`` has attached as ``STORE_CATALOG`` (None: none, e.g. a store in memory)."""
    rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?", [STORE_CATALOG]).fetchall()
    return rows[0][0] if rows and rows[0][0] else None


_SIZE = re.compile(r"^\s*([0-9.]+)\s*(bytes|[kmgtp]ib)\s*$", re.IGNORECASE)
_UNIT = {"bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50}


def setting_bytes(con: duckdb.DuckDBPyConnection, name: str) -> int | None:
    """A DuckDB size setting (``checkpoint_threshold``, ``memory_limit``) in bytes, read back as DuckDB shows
    it (``953.6 MiB``) whatever unit it was given in; None if it is not a size."""
    ((setting,),) = con.execute(f"SELECT current_setting('{name}')").fetchall()
    match = _SIZE.match(str(setting))
    return int(float(match[1]) * _UNIT[match[2].lower()]) if match else None
