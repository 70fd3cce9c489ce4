"""The rolling archive: closed hourly windows of each raw table as Hive-partitioned Parquet.

Layout: ``<root>/signal=<table>/date=YYYY-MM-DD/hour=HH/<content hash>.parquet``. The root is a local directory
or any URI pyarrow's filesystem layer opens (``s3://bucket/prefix?endpoint_override=…&scheme=http`` for an
S3-compatible server).

Idempotent by construction: before a window is written, the keys already archived for it are read back and only
rows not yet there are written, under a name that is the MD5 of their sorted keys. So writing a window twice
writes nothing the second time, a window re-archived after a crash between archive and delete adds nothing, rows
that arrive late for an archived window land in a new file beside the first, and several receivers sharing one
archive never overwrite each other. A file is written under a temporary name and moved into place; it counts as
archived only after its row count has been read back (``WindowWrite.verified``).
"""

from __future__ import annotations

import datetime as dt
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
        """Archive ``rows`` (every live row of the window) and return what was written, verified."""
        new = _not_yet_archived(self._duck.cursor(), rows, self.archived_keys(spec, start), spec.keys)
        if new.num_rows == 0:
            return WindowWrite(spec.table, start, rows.num_rows, 0, None, 0, True)
        name = _content_name(self._duck.cursor(), new, spec.keys)
        final = f"{window_dir(self.root, spec.signal, start)}/{name}.parquet"
        if self.fs.get_file_info(final).type == pafs.FileType.File and self._rows_in(final) == new.num_rows:
            return WindowWrite(spec.table, start, rows.num_rows, 0, final, 0, True)
        self.fs.create_dir(window_dir(self.root, spec.signal, start), recursive=True)
        tmp = f"{final}.{uuid.uuid4().hex}.tmp"
        pq.write_table(new, tmp, filesystem=self.fs, row_group_size=ROW_GROUP_ROWS, compression="zstd")
        self.fs.move(tmp, final)
        written = self._rows_in(final)
        if written != new.num_rows:
            raise OSError(f"archive file {final} holds {written} rows, {new.num_rows} were written")
        size = self.fs.get_file_info(final).size or 0
        return WindowWrite(spec.table, start, rows.num_rows, new.num_rows, final, size, False)

    def _rows_in(self, path: str) -> int:
        with self.fs.open_input_file(path) as f:
            return pq.ParquetFile(f).metadata.num_rows


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
    con: duckdb.DuckDBPyConnection, rows: pa.Table, archived: pa.Table | None, keys: tuple[str, ...]
) -> pa.Table:
    """``rows`` whose key is not among ``archived`` (NULL keys equal each other, as in the views' dedup), sorted
    by key so equal content gives an equal file, and with each key once."""
    try:
        con.register("lc_rows", rows)
        order = ", ".join(f'"{k}"' for k in keys)
        if archived is None:
            sql = "SELECT * FROM lc_rows"
        else:
            con.register("lc_archived", archived)
            sql = f"SELECT r.* FROM lc_rows r ANTI JOIN lc_archived a ON {_keys_match(keys, 'r', 'a')}"
        partition = ", ".join(f'"{k}"' for k in keys)
        sql = f"{sql} QUALIFY row_number() OVER (PARTITION BY {partition}) = 1 ORDER BY {order}"
        return con.sql(sql).to_arrow_table().cast(rows.schema)
    finally:
        con.close()


def _content_name(con: duckdb.DuckDBPyConnection, rows: pa.Table, keys: tuple[str, ...]) -> str:
    try:
        con.register("lc_rows", rows)
        cols = ", ".join(f'"{k}"' for k in keys)
        sql = f"SELECT md5(string_agg(CAST(ROW({cols}) AS VARCHAR), chr(10) ORDER BY {cols})) FROM lc_rows"
        return str(con.execute(sql).fetchall()[0][0])
    finally:
        con.close()
