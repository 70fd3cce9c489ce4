"""The QueryService of proto/otel_agent/api/v1/query.proto, independent of transport."""

from __future__ import annotations

import datetime
import decimal
import json
import math
import uuid
from typing import Any

import duckdb
from google.protobuf import json_format, struct_pb2

from otel_agent.api.v1 import query_pb2
from otel_agent.query.readonly import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, run_query
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


class QueryService:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        auth: Authenticator,
        max_rows: int = DEFAULT_MAX_ROWS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.con = con
        self.auth = auth
        self.max_rows = max_rows
        self.timeout_s = timeout_s

    def query(self, request: query_pb2.QueryRequest, authorization: str | None) -> query_pb2.QueryResponse:
        self.auth.authenticate(authorization, "query")
        max_rows = min(request.max_rows or self.max_rows, self.max_rows)
        timeout_s = min((request.timeout_ms / 1000) or self.timeout_s, self.timeout_s)
        params = [json_format.MessageToDict(p) for p in request.params]
        result = run_query(self.con, request.sql, params, max_rows=max_rows, timeout_s=timeout_s)
        response = query_pb2.QueryResponse(truncated=result.truncated)
        for name, type_ in zip(result.columns, result.types, strict=True):
            response.columns.add(name=name, type=type_)
        for row in result.rows:
            response.rows.add().values.extend(to_value(v) for v in row)
        return response
