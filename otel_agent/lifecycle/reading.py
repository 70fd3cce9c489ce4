"""Reading live ∪ archive: every raw table becomes a view over the live store(s) and the archive's Parquet,
deduplicated by its re-delivery key, with the derived SQL on top, so runs, lineage, receipts… answer over the
whole history.

A local archive is read by DuckDB's own Parquet reader (``read_parquet`` with ``hive_partitioning``); an S3 one
through pyarrow's filesystem layer (DuckDB here has no httpfs: REFERENCE §10), registered as an Arrow dataset
that DuckDB scans with projection and filter pushdown. Archive columns are cast to the live table's types (JSON
is stored as Parquet strings), so a view's rows are typed exactly as the live table's.

Which archive a reader uses is an explicit argument of how its store is opened: ``query.client.open_readonly(dbs,
archive=…)``, ``read.stores.Where.archive`` (the reading commands' ``--archive`` option).

A receiver with an ``--archive`` reads the same way on its own connection (``attach_history``): an in-memory
catalog ``otel_agent_history`` beside the store's, holding the union views over the store's tables and this
release's derived SQL, which its query API and console read (``store.database.reading_cursor``) while the writer and the
lifecycle keep the store's own catalog (``store_cursor``). With an S3 archive the views scan Arrow datasets, which
DuckDB resolves only on the cursor they were registered on: every reading cursor of the connection registers them
(``store.database.on_reading_cursor``), and each refresh replaces them (named by table and day, so a cursor opened
before a refresh still finds every name its views use).
"""

from __future__ import annotations

import re

import duckdb
import pyarrow.dataset as pads

from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.tables import BY_TABLE
from otel_agent.store.database import (
    HISTORY_CATALOG,
    RAW_TABLES,
    STORE_CATALOG,
    apply_derived,
    on_reading_cursor,
    schema_tables,
    store_cursor,
)
from otel_agent.store.shards import attach_shards, union_sql

Sources = dict[str, pads.Dataset]
"""Arrow datasets an S3 archive's views scan, by the name the views use."""

_SOURCES: dict[int, Sources] = {}
"""Per receiver connection (``id``), the datasets its reading cursors register (``attach_history``)."""


def archive_source(
    con: duckdb.DuckDBPyConnection, archive: Archive, table: str, sources: Sources | None = None
) -> str | None:
    """A FROM-able expression for ``table``'s archive, or None when it has no file yet.

    Partition pruning: for a table with a time column the expression is a UNION ALL of one scan per ``date=``
    partition, each filtered to its own day. DuckDB's optimizer proves a day's filter and a query's time
    filter disjoint and drops that scan from the plan (EXPLAIN lists only the days in range), so the files of
    other days are never opened; within a day, Parquet row-group statistics skip the hours outside the range.
    Span children (no time column) are one scan, read through their spans' keys. The datasets an S3 archive's
    scans register on ``con`` are also put in ``sources``."""
    files = archive.files(table)  # one (recursive) listing per table
    if not files:
        return None
    base = f"{archive.root}/signal={table}"
    time_col = BY_TABLE[table].time
    bounded = archive.since is not None or archive.until is not None
    if time_col is None and not bounded:
        return _scan(con, archive, base, files, f"archive_{table}", sources)
    days: dict[str, list[str]] = {}
    for path in files:
        match = re.search(r"/date=(\d{4}-\d{2}-\d{2})/", path.removeprefix(base))
        if match and archive.reads_day(match[1]):
            days.setdefault(match[1], []).append(path)
    if not days:
        return None
    branches = []
    for day, day_files in sorted(days.items()):
        name = f"archive_{table}_{day.replace('-', '')}"
        scan = _scan(con, archive, f"{base}/date={day}", day_files, name, sources)
        if time_col is None:  # span children of a bounded archive: their spans' days
            branches.append(f"SELECT * FROM {scan}")
        else:
            branches.append(
                f"SELECT * FROM {scan} WHERE \"{time_col}\" >= DATE '{day}' AND \"{time_col}\" < DATE '{day}' + 1"
            )
    return "(" + " UNION ALL BY NAME ".join(branches) + ")"


def _scan(
    con: duckdb.DuckDBPyConnection,
    archive: Archive,
    directory: str,
    files: list[str],
    name: str,
    sources: Sources | None,
) -> str:
    """The Parquet files under ``directory``: DuckDB's reader for a local archive (its glob also finds files
    written since), else a registered Arrow dataset over pyarrow's filesystem of ``files`` (DuckDB scans it with
    projection and filter pushdown)."""
    if archive.is_local:
        glob = f"{directory}/**/*.parquet".replace("'", "''")
        return f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
    dataset = pads.dataset(
        files, filesystem=archive.fs, format="parquet", partitioning="hive", partition_base_dir=directory
    )
    con.register(name, dataset)
    if sources is not None:
        sources[name] = dataset
    return name


def open_with_archive(dbs: list[str], uri: str) -> duckdb.DuckDBPyConnection:
    """An in-memory connection over the store(s) (``store.shards.attach_shards``: each file attached read-only,
    this release's derived SQL on top) whose raw tables are live ∪ archive, deduplicated.

    The shard catalog is used even for one current file (``open_read_only`` would return the file itself): only
    an in-memory catalog can hold the union views. DuckDB binds a view's body when it is queried, so replacing
    the raw-table views is all it takes for every derived view above them to read the whole history. The
    product tables (reviews, trusted_writers) are never archived and stay the stores' own."""
    archive = Archive(uri)
    con = attach_shards(dbs)
    try:
        if archive.is_local:  # the one directory a locked-down connection (query.readonly) may still read
            con.execute("SET allowed_directories = [?]", [archive.root.rstrip("/") + "/"])
        # Every query binds the views again, reading each scanned file's footer: keep them once read.
        con.execute("SET parquet_metadata_cache = true")
        for table in RAW_TABLES:
            con.execute(f"CREATE OR REPLACE VIEW {table} AS {live_and_archive_sql(con, archive, table, len(dbs))}")
    except BaseException:
        con.close()
        raise
    return con


def live_and_archive_sql(con: duckdb.DuckDBPyConnection, archive: Archive, table: str, shards: int) -> str:
    return union_with_archive_sql(con, archive, table, union_sql(table, list(range(shards))))


def union_with_archive_sql(
    con: duckdb.DuckDBPyConnection, archive: Archive, table: str, live: str, sources: Sources | None = None
) -> str:
    """The body of ``table``'s view: the rows of the query ``live`` ∪ the archive's, deduplicated by its keys."""
    source = archive_source(con, archive, table, sources)
    if source is None:
        return live
    # The live table's columns and types: the archive's are cast to them.
    # (not ingest_seq: the store's own bookkeeping, which the archive does not keep: retention._archived_columns)
    columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM ({live})").fetchall() if r[0] != "ingest_seq"]
    names = ", ".join(f'"{c}"' for c, _ in columns)
    casts = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in columns)
    keys = ", ".join(f'"{k}"' for k in BY_TABLE[table].keys)
    # The live copy wins over the archived one (ORDER BY: live first), so a row present in both reads as stored.
    return (
        f"SELECT {names} FROM (SELECT {names}, 0 AS lc_from_archive FROM ({live}) "
        f"UNION ALL SELECT {casts}, 1 FROM {source}) "
        f"QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY lc_from_archive) = 1"
    )


def attach_history(con: duckdb.DuckDBPyConnection, archive: Archive) -> None:
    """Give a receiver's connection the catalog ``HISTORY_CATALOG``: every schema table of the store as a view
    (raw tables: live ∪ archive; the others: the store's own), with this release's derived SQL on top.

    Called before the connection is locked down (``query.readonly.lock_down``): for a local archive it sets the
    one directory DuckDB may read; an S3 archive is read by pyarrow (Arrow datasets registered on each reading
    cursor), which the lock does not concern. Views bind their names in their own catalog, so every derived view
    in it reads the union, whichever catalog a cursor is in."""
    if archive.is_local:
        con.execute("SET allowed_directories = [?]", [archive.root.rstrip("/") + "/"])
    else:
        sources = _SOURCES[id(con)] = {}
        on_reading_cursor(con, lambda cur: _register(cur, sources))
    con.execute("SET parquet_metadata_cache = true")
    con.execute(f"ATTACH ':memory:' AS {HISTORY_CATALOG}")
    with store_cursor(con) as cur:  # the views bind the store's tables: it must stay attached meanwhile
        cur.execute(f"USE {HISTORY_CATALOG}")
        for table in schema_tables():
            if table not in RAW_TABLES:  # meta, product tables: the store's, written by the writer
                cur.execute(f"CREATE VIEW {table} AS SELECT * FROM {STORE_CATALOG}.main.{table}")
        _refresh(cur, archive, _SOURCES.get(id(con)))
        apply_derived(cur)


def detach_history(con: duckdb.DuckDBPyConnection) -> None:
    """Forget what ``attach_history`` registered for ``con`` (before it closes)."""
    _SOURCES.pop(id(con), None)
    on_reading_cursor(con, None)


def refresh_history(con: duckdb.DuckDBPyConnection, archive: Archive) -> None:
    """(Re)create the raw-table views of ``HISTORY_CATALOG`` from the archive's partitions as they are now: a
    table's first file and a new ``date=`` partition enter a view only here (the lifecycle calls it after it
    archives a window; a local day's files written since are found by the view's glob when it is bound, an S3
    day's are listed here)."""
    with store_cursor(con) as cur:  # on the lifecycle's thread, beside the writer (store.readers)
        _refresh(cur, archive, _SOURCES.get(id(con)))


def _refresh(cur: duckdb.DuckDBPyConnection, archive: Archive, sources: Sources | None) -> None:
    fresh: Sources = {}
    cur.execute(f"USE {HISTORY_CATALOG}")
    for table in RAW_TABLES:
        live = f"SELECT * FROM {STORE_CATALOG}.main.{table}"
        body = union_with_archive_sql(cur, archive, table, live, fresh)
        cur.execute(f"CREATE OR REPLACE VIEW {table} AS {body}")
    if sources is not None:
        sources.update(fresh)  # one dict update: a reading cursor sees the old datasets or the new


def _register(cur: duckdb.DuckDBPyConnection, sources: Sources) -> None:
    for name, dataset in list(sources.items()):
        cur.register(name, dataset)
