"""Helpers for the derived run view tests: write spans into a store, read rows back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
from opentelemetry.sdk.trace import ReadableSpan

from otel_agent import DuckDBSpanExporter
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor, load_rules
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store
from otel_agent.store.maintained import reads_maintained_runs
from tests.conftest import as_dicts, new_store
from tests.maintained_support import assert_same_runs

RUN_VIEWS = [
    "classified_spans",
    "runs",
    "steps",
    "skill_invocations",
    "provider_calls",
    "tool_invocations",
    "guard_results",
    "verifier_results",
    "run_metrics",
    "cost_breakdown",
    "provider_health",
    "skill_health",
    "tool_usage",
    "run_timeline",
    "run_spans",
    "memory_operations",
    "sessions",
    "evaluations",
    "call_content",
    "run_rollups",
    "proxy_requests",
    "proxy_fallbacks",
    "proxy_health",
]
"""The public views of derived model I (docs/views-runs.md)."""


def write_store(path: Path, spans: Sequence[ReadableSpan]) -> Path:
    """Write spans into a new store through DuckDBSpanExporter (one export, one commit). Its shutdown folds them
    into the maintained state, which the file's runs view then reads: every test over such a store reads the
    maintained runs, and here they are compared with the query-time SQL first (the differential check)."""
    exporter = DuckDBSpanExporter(new_store(path))  # a copy of an empty store, unless the file exists
    try:
        exporter.export(list(spans))
    finally:
        exporter.shutdown()
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert reads_maintained_runs(con)
        assert_same_runs(con)
    finally:
        con.close()
    return path


def query(path: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Rows as dicts, read from a closed store file."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return as_dicts(con.execute(sql, params or []))
    finally:
        con.close()


def write_logs(path: Path, records: Sequence[Any]) -> Path:
    """Append SDK log records (``ReadableLogRecord``) to a store, as the receiver would decode them."""
    import time

    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    con = open_store(str(path))
    writer = Writer(con, max_inflight_bytes=1 << 62)
    try:
        payload = encode_logs(list(records)).SerializeToString()
        batch = decode_payload("logs", PROTOBUF, payload, Redactor(load_rules(None)), None, time.time_ns() // 1000)
        writer.write(batch)
    finally:
        writer.close()
        con.close()
    return path
