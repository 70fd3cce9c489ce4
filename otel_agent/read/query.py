"""Untrusted read-only SQL through the read layer: the query API's own sandbox and caps (``query.readonly``:
one SELECT, no file access, a deadline, row and byte caps), on a file's connection or through a receiver's
``/v1/query`` (which applies the receiver's)."""

from __future__ import annotations

from otel_agent.errors import QueryRejectedError
from otel_agent.query.readonly import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, run_query
from otel_agent.read.source import CursorSource, RemoteSource, Source, Table


def sandboxed(
    src: Source, sql: str, *, max_rows: int = DEFAULT_MAX_ROWS, max_bytes: int | None = DEFAULT_MAX_BYTES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Table:  # fmt: skip
    """The rows of one untrusted read statement, cut at ``max_rows`` / ``max_bytes`` (None: no byte cap);
    ``QueryRejectedError`` for anything but one read, ``QueryTimeoutError`` past ``timeout_s``."""
    if isinstance(src, RemoteSource):
        return Table.of(src.client.query(sql, max_rows=max_rows, max_bytes=max_bytes or 0))
    if isinstance(src, CursorSource) and src.con is not None:
        return Table.of(run_query(src.con, sql, max_rows=max_rows, max_bytes=max_bytes, timeout_s=timeout_s))
    raise QueryRejectedError("this source runs the read layer's own queries only")
