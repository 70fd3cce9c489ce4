"""Reading a closed demo store in tests."""

from __future__ import annotations

import json
from typing import Any

import duckdb

KIND = "attributes->>'otel_agent.record.kind'"


def query(db: str, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def records(db: str) -> list[tuple[Any, ...]]:
    """Every span as what it records, without the ids and times that differ between runs: service, name, kind,
    status, attributes, parent's name, events (name, attributes) and the names of the spans its links point at.
    Sorted, so two runs compare equal exactly when they recorded the same things."""
    spans = query(
        db,
        r"""
        SELECT s.trace_id, s.span_id, s.service_name, s.name, s.kind, s.status_code, s.status_message,
               -- a pending span names its span's parent by id (docs/views-runs.md "Runs in progress")
               regexp_replace(s.attributes::VARCHAR, '"logfire.pending_parent_id":\s*"[0-9a-f]{16}"',
                              '"logfire.pending_parent_id":"<id>"'),
               p.name
        FROM spans s LEFT JOIN spans p ON p.trace_id = s.trace_id AND p.span_id = s.parent_span_id
        """,
    )
    events: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for trace_id, span_id, name, attrs in query(
        db, "SELECT trace_id, span_id, name, attributes::VARCHAR FROM span_events ORDER BY event_index"
    ):
        events.setdefault((trace_id, span_id), []).append((name, _sorted(attrs)))
    links: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for trace_id, span_id, target, attrs in query(
        db,
        """
        SELECT l.trace_id, l.span_id, d.name, l.attributes::VARCHAR FROM span_links l
        LEFT JOIN spans d ON d.trace_id = l.linked_trace_id AND d.span_id = l.linked_span_id ORDER BY link_index
        """,
    ):
        links.setdefault((trace_id, span_id), []).append((target, _sorted(attrs)))
    out = [
        (
            service,
            name,
            kind,
            status,
            message,
            _sorted(attrs),
            parent,
            tuple(events.get((t, s), ())),
            tuple(links.get((t, s), ())),
        )
        for t, s, service, name, kind, status, message, attrs, parent in spans
    ]
    return sorted(out, key=repr)


def _sorted(attrs: str) -> str:
    return json.dumps(json.loads(attrs), sort_keys=True)
