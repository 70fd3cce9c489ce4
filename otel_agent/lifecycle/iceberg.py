"""The archive as Apache Iceberg tables (``pyiceberg`` SqlCatalog: a SQLite file by default, or a Postgres URL),
so Spark, Trino, Flink, Snowflake, ClickHouse or DuckDB read the history as tables.

Iceberg format 2 (the newest pyiceberg writes) has no nanosecond timestamps and no unsigned integers, and the
archive must stay lossless, so the Iceberg tables hold their own data files (written by pyiceberg's ``append``)
in Iceberg's types, losslessly converted: ``TIMESTAMP_NS`` columns are ``long`` nanoseconds since the epoch,
unsigned 8/16/32-bit integers are ``long``, ``UBIGINT`` is ``decimal(20, 0)``. Beside each nanosecond column
``c`` a ``c_ts`` column holds the same instant as Iceberg's ``timestamptz`` (microseconds, UTC), the type Spark,
Trino and every other engine read natively, and each table with a time is partitioned by ``day(<time>_ts)`` of
the column that places its rows in the archive's windows (``PARTITION_TIME``): a query filtering on that
timestamp reads only the days in range. Not format 3's ``timestamp_ns``: Spark has no nanosecond type (its
Iceberg runtime cannot read such a column), pyiceberg 0.12 writes format 3 only partly, and a format-2 table
made by an earlier release evolves in place (columns and partition field added), where a format change would
rewrite it. The Hive-partitioned Parquet stays DuckDB's native, pruned copy (``reading.py``).

Each append carries the name of the archive file it mirrors in its snapshot summary (``otel_agent.archive_file``),
so a window mirrored twice (a crash between the Parquet write and the Iceberg commit, a restart) is appended
once. Several receivers appending to one table conflict on commit; pyiceberg raises ``CommitFailedException``
and the append is retried on the refreshed table.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table
from pyiceberg.transforms import DayTransform

from otel_agent.lifecycle.archive import Archive

log = logging.getLogger(__name__)

NAMESPACE = "otel_agent"
FILE_PROPERTY = "otel_agent.archive_file"
COMMIT_NUM_RETRIES = "commit.retry.num-retries"
NO_RETRIES = {COMMIT_NUM_RETRIES: "0"}
TS_SUFFIX = "_ts"
"""``c_ts``: the ``timestamptz`` (µs, UTC) twin of the nanosecond column ``c``."""
PARTITION_TIME = {
    "spans": "end_time",
    "span_events": "time",
    "parsed_retrieval_documents": "end_time",
    "lineage_keys": "end_time",
    "logs": "time",
    "metric_points": "time",
}
"""The nanosecond column whose day partitions each table (``day(<column>_ts)``): the archive's window time
(``tables.py``), and an event's own time for span events. Span links have no time: unpartitioned."""


def iceberg_type(t: pa.DataType) -> pa.DataType:
    """The lossless Iceberg-v2-compatible Arrow type of one archive column type."""
    if isinstance(t, pa.BaseExtensionType):  # arrow.json (DuckDB's JSON columns, pyarrow's JsonType): its storage
        return iceberg_type(t.storage_type)
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_unsigned_integer(t):
        return pa.int64()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("element", iceberg_type(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, iceberg_type(f.type)) for f in t])
    return t


def to_iceberg(table: pa.Table) -> pa.Table:
    """``table`` in lossless Iceberg types, then a ``c_ts`` timestamptz column for each nanosecond column ``c``
    (after all others, so a table made before these columns existed keeps its column order)."""
    schema = pa.schema([pa.field(f.name, iceberg_type(f.type)) for f in table.schema])
    # pyarrow casts an extension array (nested ones too) to its storage type, and the rest losslessly.
    columns = [table.column(f.name).cast(f.type) for f in schema]
    for f in table.schema:
        if pa.types.is_timestamp(f.type) and f.type.unit == "ns" and f.name + TS_SUFFIX not in table.schema.names:
            micros = table.column(f.name).cast(pa.timestamp("us", tz=f.type.tz), safe=False)  # truncated to µs
            columns.append(micros.cast(pa.timestamp("us", tz="UTC")))  # naive archive times are UTC
            schema = schema.append(pa.field(f.name + TS_SUFFIX, pa.timestamp("us", tz="UTC")))
    return pa.table(columns, schema=schema)


class IcebergMirror:
    def __init__(self, catalog_uri: str, warehouse: str, *, retries: int = 8) -> None:
        self.catalog = SqlCatalog(NAMESPACE, uri=catalog_uri, warehouse=warehouse)
        self.catalog.create_namespace_if_not_exists(NAMESPACE)
        self.retries = retries
        self.conflicts = 0  # commits that lost a race with another appender and were retried
        self._tables: dict[str, Table] = {}

    def table(self, name: str, schema: pa.Schema) -> Table:
        """The table (created on first use), as this mirror last saw it: another appender may have moved on.

        pyiceberg (0.10+) retries a conflicting append by itself, on the refreshed table, which would append a
        file another receiver appended meanwhile a second time: its retries are turned off on every table
        (``NO_RETRIES``), so a conflict comes back to ``append``, which checks again before it retries."""
        if name not in self._tables:
            table = self.catalog.create_table_if_not_exists(f"{NAMESPACE}.{name}", schema=schema, properties=NO_RETRIES)
            for _ in range(self.retries + 1):  # a new table, or one made by an earlier release: brought up to date
                if _up_to_date(table, name, schema):
                    break
                try:
                    _evolve(table, name, schema)
                except CommitFailedException:  # another appender evolved it first: look again
                    table.refresh()
            self._tables[name] = table
        return self._tables[name]

    def append(self, name: str, rows: pa.Table, archive_file: str) -> bool:
        """Append ``rows`` (the content of ``archive_file``) unless an earlier append already did; True if done now."""
        data = to_iceberg(rows)
        table = self.table(name, data.schema)
        for attempt in range(self.retries + 1):
            if any(s.summary is not None and s.summary.get(FILE_PROPERTY) == archive_file for s in table.snapshots()):
                return False
            try:
                table.append(data, snapshot_properties={FILE_PROPERTY: archive_file})
                return True
            except CommitFailedException as exc:
                if attempt == self.retries:
                    raise
                self.conflicts += 1
                log.info("iceberg: commit conflict on %s (%s); retrying", name, exc)
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))
                table.refresh()
        return False

    def registered(self, name: str) -> set[str]:
        """Archive file names already appended to table ``name``."""
        try:
            table = self.catalog.load_table(f"{NAMESPACE}.{name}")
        except Exception:  # NoSuchTableError: nothing registered yet
            return set()
        return {s.summary[FILE_PROPERTY] for s in table.snapshots() if s.summary and FILE_PROPERTY in s.summary}

    def sync_window(self, archive: Archive, signal: str, start: dt.datetime) -> int:
        """Append every Parquet file of the window not yet in its Iceberg table; returns how many were."""
        done = self.registered(signal)
        added = 0
        for path in archive.files(signal, start):
            name = path.rsplit("/", 1)[-1]
            if name not in done:
                rows = pq.read_table(path, filesystem=archive.fs)
                added += self.append(signal, rows, name)
        return added


def _partition_source(name: str, schema: pa.Schema) -> str | None:
    time = PARTITION_TIME.get(name)
    return time + TS_SUFFIX if time is not None and time + TS_SUFFIX in schema.names else None


def _up_to_date(table: Table, name: str, schema: pa.Schema) -> bool:
    """Whether ``table`` has this release's retry property, every column of ``schema`` and its day partition."""
    if table.properties.get(COMMIT_NUM_RETRIES) != "0":
        return False
    if _names(table, schema):
        return False
    source = _partition_source(name, schema)
    return source is None or any(f.name == source.removesuffix(TS_SUFFIX) + "_day" for f in table.spec().fields)


def _names(table: Table, schema: pa.Schema) -> list[str]:
    """The columns of ``schema`` that ``table`` lacks."""
    known = {f.name for f in table.schema().fields}
    return [n for n in schema.names if n not in known]


def _evolve(table: Table, name: str, schema: pa.Schema) -> None:
    """One commit: the retry property, the columns ``schema`` adds (the ``_ts`` ones on a table made before
    them; rows appended before read NULL there: filter those by the nanosecond column), the day partition
    (files appended before stay unpartitioned; Iceberg plans each file by its own spec)."""
    with table.transaction() as tx:
        if table.properties.get(COMMIT_NUM_RETRIES) != "0":
            tx.set_properties(NO_RETRIES)
        if _names(table, schema):
            with tx.update_schema() as update:
                update.union_by_name(schema)
    source = _partition_source(name, schema)
    field = source.removesuffix(TS_SUFFIX) + "_day" if source else None
    if source is not None and not any(f.name == field for f in table.spec().fields):
        with table.update_spec() as spec:
            spec.add_field(source, DayTransform(), field)


def default_catalog(archive: Archive, catalog_uri: str | None) -> IcebergMirror | None:
    """The given catalog, or a SQLite file inside a local archive (an S3 archive needs ``--iceberg-catalog``)."""
    if catalog_uri is None and not archive.is_local:
        return None
    uri = catalog_uri or f"sqlite:///{archive.root}/iceberg_catalog.db"
    warehouse = f"file://{archive.root}/iceberg" if archive.is_local else f"{archive.uri.split('?')[0]}/iceberg"
    return IcebergMirror(uri, warehouse)
