"""The QueryService of proto/otel_agent/api/v1/query.proto, independent of transport.

Each query is admitted to a bounded pool of its own (``BoundedPool``): its deadline counts from admission, so
time spent waiting for a worker is part of its time limit, and a full pool refuses at once (retryable). Results
are capped in rows and in bytes while they are fetched (``run_query``); the reply says which cap cut them.
Error messages never carry the store's file path.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import duckdb
from google.protobuf import json_format, struct_pb2

from otel_agent.api.v1 import query_pb2
from otel_agent.errors import OtelAgentError
from otel_agent.query.readonly import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    QueryResult,
    run_query,
    to_ipc,
)
from otel_agent.server.api import BoundedPool
from otel_agent.server.auth import Authenticator

_MAX_SAFE_INT = 2**53


def to_value(v: Any) -> struct_pb2.Value:
    """A DuckDB result value as a protobuf ``Value`` (see Row in query.proto for the rules)."""
    out = struct_pb2.Value()
    if v is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(v, bool):
        out.bool_value = v
    elif isinstance(v, int):
        if abs(v) < _MAX_SAFE_INT:
            out.number_value = v
        else:
            out.string_value = str(v)
    elif isinstance(v, float):
        if math.isfinite(v):
            out.number_value = v
        else:
            out.string_value = str(v)
    elif isinstance(v, str):
        out.string_value = v
    elif isinstance(v, (list, tuple)):
        out.list_value.values.extend(to_value(x) for x in v)
    elif isinstance(v, dict):
        for k, x in v.items():
            out.struct_value.fields[str(k)].CopyFrom(to_value(x))
    elif isinstance(v, (bytes, bytearray, memoryview)):
        out.string_value = bytes(v).hex()
    elif isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        out.string_value = v.isoformat()
    elif isinstance(v, (decimal.Decimal, uuid.UUID, datetime.timedelta)):
        out.string_value = str(v)
    else:
        out.string_value = json.dumps(v, default=str)
    return out


_TRUNCATION = {
    "": query_pb2.TRUNCATION_NONE,
    "rows": query_pb2.TRUNCATION_ROWS,
    "bytes": query_pb2.TRUNCATION_BYTES,
}
# Room kept in a reply for everything but the rows (columns, reason, framing), below the transport's limit.
_REPLY_OVERHEAD = 64 * 1024
DEFAULT_WORKERS = 2


class QueryService:
    """The QueryService of query.proto over the store, independent of transport: bounded rows, bytes and time."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        auth: Authenticator,
        max_rows: int = DEFAULT_MAX_ROWS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        workers: int = DEFAULT_WORKERS,
        max_message_bytes: int | None = None,
        db_path: str | None = None,
    ) -> None:
        self.con = con
        self.auth = auth
        self.max_rows = max_rows
        self.timeout_s = timeout_s
        # A reply must fit the transport's message limit (gRPC refuses to send a larger one, after building it).
        self.max_bytes = max_bytes if max_message_bytes is None else min(max_bytes, max_message_bytes - _REPLY_OVERHEAD)
        # Four times as many may wait as run: a burst (a console page's queries) is absorbed, a flood is refused at
        # once, and a waiting query's time limit keeps running while it waits.
        self.pool = BoundedPool("query", workers, waiting=workers * 4)
        self._hidden = _path_forms(db_path) if db_path else []

    def submit(
        self,
        request: query_pb2.QueryRequest,
        authorization: str | None,
        encode: Callable[[query_pb2.QueryResponse], Any] = lambda m: m,
    ) -> Future[Any]:
        """Authenticate, admit (``ApiBusyError`` when the pool is full) and run on the query pool."""
        self.auth.authenticate(authorization, "query")
        timeout_s = min((request.timeout_ms / 1000) or self.timeout_s, self.timeout_s)
        deadline = time.monotonic() + timeout_s  # from admission: waiting for a worker counts
        return self.pool.submit(lambda: encode(self._run(request, deadline, timeout_s)))

    def query(self, request: query_pb2.QueryRequest, authorization: str | None) -> query_pb2.QueryResponse:
        """Run one query and wait for its reply (the blocking form of ``submit``)."""
        return self.submit(request, authorization).result()

    def _run(self, request: query_pb2.QueryRequest, deadline: float, timeout_s: float) -> query_pb2.QueryResponse:
        max_rows = min(request.max_rows or self.max_rows, self.max_rows)
        max_bytes = min(request.max_bytes or self.max_bytes, self.max_bytes)
        params = [json_format.MessageToDict(p) for p in request.params]
        try:
            result = run_query(
                self.con,
                request.sql,
                params,
                max_rows=max_rows,
                max_bytes=max_bytes,
                timeout_s=timeout_s,
                deadline=deadline,
            )
        except OtelAgentError as exc:
            raise self._scrubbed(exc) from exc.__cause__
        response = query_pb2.QueryResponse()
        for name, type_ in zip(result.columns, result.types, strict=True):
            response.columns.add(name=name, type=type_)
        if request.format == query_pb2.RESULT_FORMAT_ARROW_IPC:
            response.arrow_ipc = to_ipc(result.table)
        else:
            _add_rows(response, result, max_bytes)
        response.truncated = result.truncated
        response.truncated_by = _TRUNCATION[result.truncated_by]
        response.truncated_reason = result.truncated_reason
        return response

    def _scrubbed(self, exc: OtelAgentError) -> OtelAgentError:
        """The same error with the store's path replaced (DuckDB names files in some messages)."""
        message = str(exc)
        for form in self._hidden:
            message = message.replace(form, "<store>")
        if message == str(exc):
            return exc
        return type(exc)(message)

    def close(self) -> None:
        """Stop the query pool."""
        self.pool.shutdown()


def _path_forms(db_path: str) -> list[str]:
    """The store's absolute path as DuckDB may spell it, and its folder, longest first (the file is replaced
    before its folder)."""
    path = Path(db_path)
    forms = {str(path.absolute()), str(path.resolve()), str(path.resolve().parent), str(path.absolute().parent)}
    return sorted((f for f in forms if f != "/"), key=len, reverse=True)


def _add_rows(response: query_pb2.QueryResponse, result: QueryResult, max_bytes: int) -> None:
    """Rows as Values; the encoded size is capped too (a Value costs more than its Arrow cell)."""
    size = 0
    for row in result.rows:
        message = query_pb2.Row(values=[to_value(v) for v in row])
        size += message.ByteSize()
        if size > max_bytes:
            response.truncated = True
            result.truncated, result.truncated_by = True, "bytes"
            result.truncated_reason = (
                f"the result is larger than the byte cap of {max_bytes} bytes; {len(response.rows)} rows fit"
            )
            return
        response.rows.append(message)
