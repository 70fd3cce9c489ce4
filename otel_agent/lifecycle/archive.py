"""The rolling archive: closed hourly windows of each raw table as Hive-partitioned Parquet.

Layout: ``<root>/signal=<table>/date=YYYY-MM-DD/hour=HH/<content hash>.parquet``. The root is a local directory
or any URI pyarrow's filesystem layer opens (``s3://bucket/prefix?endpoint_override=…&scheme=http`` for an
S3-compatible server).

Idempotent by construction: before a window is written, the keys already archived for it are read back and only
rows not yet there are written, sorted by key, under a name that is the MD5 of their sorted keys (of the Arrow IPC
stream of the key columns). So writing a window twice
writes nothing the second time, a window re-archived after a crash between archive and delete adds nothing, rows
that arrive late for an archived window land in a new file beside the first, and several receivers sharing one
archive never overwrite each other. A file is written under a temporary name and moved into place; it counts as
archived only after its row count has been read back (``WindowWrite.verified``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import urllib.parse
import uuid
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from otel_agent.lifecycle.tables import TableSpec

ROW_GROUP_ROWS = 122_880
"""Rows per Parquet row group: DuckDB's own row group size, large enough for scans, small enough that a
time filter skips most of a window's file by its statistics."""


@dataclass
class WindowWrite:
    table: str
    window: dt.datetime
    rows_in_window: int
    rows_written: int
    path: str | None
    bytes_written: int
    already_archived: bool


def window_dir(root: str, signal: str, start: dt.datetime) -> str:
    return f"{root}/signal={signal}/date={start:%Y-%m-%d}/hour={start:%H}"


class Archive:
    def __init__(self, uri: str) -> None:
        uri, self.since, self.until = _reading_days(local_path_as_absolute(uri))
        self.uri = uri
        self.fs, root = pafs.FileSystem.from_uri(uri)
        if isinstance(self.fs, pafs.S3FileSystem):
            self.fs = _s3(uri)
        self.root = root.rstrip("/")
        self.fs.create_dir(self.root, recursive=True)
        # One in-memory database for the key arithmetic, a cursor per call: opening a database costs ~tens of ms.
        self._duck = duckdb.connect()

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def reads_day(self, day: str) -> bool:
        """Whether readers of this archive read the partition ``date=day`` (``since``/``until`` of the URI)."""
        return (self.since is None or day >= self.since) and (self.until is None or day < self.until)

    def files(self, signal: str, start: dt.datetime | None = None) -> list[str]:
        """The Parquet files of one table (one window when ``start`` is given)."""
        base = window_dir(self.root, signal, start) if start else f"{self.root}/signal={signal}"
        infos = self.fs.get_file_info(pafs.FileSelector(base, allow_not_found=True, recursive=True))
        return sorted(i.path for i in infos if i.type == pafs.FileType.File and i.path.endswith(".parquet"))

    def archived_keys(self, spec: TableSpec, start: dt.datetime) -> pa.Table | None:
        paths = self.files(spec.signal, start)
        if not paths:
            return None
        return pa.concat_tables(pq.read_table(p, columns=list(spec.keys), filesystem=self.fs) for p in paths)

    def write_window(self, spec: TableSpec, start: dt.datetime, rows: pa.Table) -> WindowWrite:
        """Archive ``rows`` (every live row of the window) and return what was written, verified.

        The per-window cost is kept to one directory listing, one write and one footer read: sorting, the
        duplicate check and the content name are Arrow compute (DuckDB only for the anti-join against rows a
        window's earlier files hold)."""
        if rows.num_rows == 0:
            return WindowWrite(spec.table, start, 0, 0, None, 0, True)
        new = _not_yet_archived(self._duck, rows, self.archived_keys(spec, start), spec.keys)
        if new.num_rows == 0:
            return WindowWrite(spec.table, start, rows.num_rows, 0, None, 0, True)
        final = f"{window_dir(self.root, spec.signal, start)}/{_content_name(new, spec.keys)}.parquet"
        tmp = f"{final}.{uuid.uuid4().hex}.tmp"
        if self.is_local:  # object stores have no directories to make
            self.fs.create_dir(window_dir(self.root, spec.signal, start), recursive=True)
        pq.write_table(new, tmp, filesystem=self.fs, row_group_size=ROW_GROUP_ROWS, compression="zstd")
        self.fs.move(tmp, final)  # a file of this name holds these very rows: replacing it changes nothing
        written, size = self._footer(final)
        if written != new.num_rows:
            raise OSError(f"archive file {final} holds {written} rows, {new.num_rows} were written")
        return WindowWrite(spec.table, start, rows.num_rows, new.num_rows, final, size, False)

    def _footer(self, path: str) -> tuple[int, int]:
        """Rows (from the footer, read back from the store) and bytes of one written file."""
        with self.fs.open_input_file(path) as f:
            return pq.ParquetFile(f).metadata.num_rows, f.size()


def local_path_as_absolute(uri: str) -> str:
    """``uri`` with a local path made absolute (``~`` expanded), relative to the working directory: pyarrow's
    ``FileSystem.from_uri`` takes only absolute paths or URIs (``archive`` alone: "URI has empty scheme"). A URI
    with a scheme (``s3://…``, ``file:///…``) is returned as it is; a ``?since=…&until=…`` stays on the path."""
    if "://" in uri:
        return uri
    path, sep, query = uri.partition("?")
    return os.path.abspath(os.path.expanduser(path)) + sep + query


def _reading_days(uri: str) -> tuple[str, str | None, str | None]:
    """``uri`` without its ``since``/``until`` query parameters, and their days (``YYYY-MM-DD``; None: unbounded).

    They bound what readers of the archive read to the ``date=`` partitions in ``[since, until)``: a per-run
    view has no time column to prune by, so without them it reads every day (docs/scale.md, "Lifecycle"). Writing
    ignores them (``files`` lists every day)."""
    parts = urllib.parse.urlsplit(uri)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    # normalised (a malformed day fails here, not as an empty archive): compared with partition names as text
    days = {k: dt.date.fromisoformat(v).isoformat() for k, v in query if k in ("since", "until")}
    if not days:
        return uri, None, None
    rest = urllib.parse.urlencode([(k, v) for k, v in query if k not in ("since", "until")], safe=":")
    return parts._replace(query=rest).geturl(), days.get("since"), days.get("until")


def _s3(uri: str) -> pafs.S3FileSystem:
    """The S3 filesystem of ``uri`` (its ``endpoint_override``, ``scheme`` and ``region`` query parameters),
    with delayed open: an object smaller than one part is then sent as one PutObject. Without it every file is a
    multipart upload, whose completion some S3-compatible servers (moto 5.2 here) answer in a form Arrow 26
    rejects."""
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query).items()}
    return pafs.S3FileSystem(
        endpoint_override=query.get("endpoint_override"),
        scheme=query.get("scheme"),
        region=query.get("region"),
        allow_delayed_open=True,
    )


def _keys_match(keys: tuple[str, ...], left: str, right: str) -> str:
    return " AND ".join(f'{left}."{k}" IS NOT DISTINCT FROM {right}."{k}"' for k in keys)


def _not_yet_archived(
    duck: duckdb.DuckDBPyConnection, rows: pa.Table, archived: pa.Table | None, keys: tuple[str, ...]
) -> pa.Table:
    """``rows`` whose key is not among ``archived`` (NULL keys equal each other, as in the views' dedup), sorted
    by key so equal content gives an equal file, and with each key once."""
    if archived is not None:
        con = duck.cursor()
        try:
            con.register("lc_rows", rows)
            con.register("lc_archived", archived)
            sql = f"SELECT r.* FROM lc_rows r ANTI JOIN lc_archived a ON {_keys_match(keys, 'r', 'a')}"
            rows = con.sql(sql).to_arrow_table().cast(rows.schema)
        finally:
            con.close()
    order = [(k, "ascending") for k in keys]
    rows = rows.sort_by(order) if rows.num_rows else rows
    if rows.num_rows and rows.select(list(keys)).group_by(list(keys)).aggregate([]).num_rows < rows.num_rows:
        rows = _first_of_each_key(duck, rows, keys)  # rare: the live store's dedup normally leaves none
    return rows.combine_chunks()


def _first_of_each_key(duck: duckdb.DuckDBPyConnection, rows: pa.Table, keys: tuple[str, ...]) -> pa.Table:
    con = duck.cursor()
    try:
        con.register("lc_rows", rows)
        cols = ", ".join(f'"{k}"' for k in keys)
        sql = f"SELECT * FROM lc_rows QUALIFY row_number() OVER (PARTITION BY {cols}) = 1 ORDER BY {cols}"
        return con.sql(sql).to_arrow_table().cast(rows.schema)
    finally:
        con.close()


def _content_name(rows: pa.Table, keys: tuple[str, ...]) -> str:
    """MD5 of the key columns of ``rows`` (sorted by key, one chunk) as an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    table = rows.select(list(keys)).combine_chunks()
    with pa.ipc.new_stream(sink, table.schema) as out:
        out.write_table(table)
    return hashlib.md5(sink.getvalue().to_pybytes(), usedforsecurity=False).hexdigest()
