"""Helpers for the derived run view tests: write spans into a store, read rows back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
from opentelemetry.sdk.trace import ReadableSpan

from otel_agent import DuckDBSpanExporter

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
]
"""The public views of derived model I (docs/views-runs.md)."""


def write_store(path: Path, spans: Sequence[ReadableSpan]) -> Path:
    """Write spans into a new store through DuckDBSpanExporter (one export, one commit)."""
    exporter = DuckDBSpanExporter(path)
    try:
        exporter.export(list(spans))
    finally:
        exporter.shutdown()
    return path


def query(path: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Rows as dicts, read from a closed store file."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        cur = con.execute(sql, params or [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()
