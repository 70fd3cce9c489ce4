"""Spans and traces: one span's details (attributes, events, links, how the run views read it, captured
input and output), a trace's tree (run spans of every run in it, and the spans no run placed), and spans found
by an attribute's value. Reads ``spans``, ``span_events``, ``span_links`` (docs/schema.md) and the run views.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from otel_agent.read.messages import Chat, chat
from otel_agent.read.runs import run_spans, scope_run
from otel_agent.read.source import Source, Table

CONTENT_KEYS = {
    "input": ("gen_ai.input.messages", "gen_ai.system_instructions", "input.value", "gen_ai.prompt",
              "llm.input_messages", "otel_agent.tool.input", "gen_ai.tool.call.arguments", "ai.prompt"),
    "output": ("gen_ai.output.messages", "output.value", "gen_ai.completion", "llm.output_messages",
               "otel_agent.tool.output", "gen_ai.tool.call.result", "ai.response.text", "ai.response.toolCalls"),
}  # fmt: skip
"""Attributes that carry captured content (only stored when the instrumentation captures it)."""


@dataclass
class SpanDetail:
    """One span: its stored row (``span``), how the run views read it (``classified``), its ``events`` and
    ``links``, its ``attributes`` parsed, captured ``content`` by side (input/output: (key, text) pairs) and the
    ``chat`` those attributes and events carry (read/messages.py)."""

    span: dict[str, Any]
    classified: dict[str, Any] | None
    events: list[dict[str, Any]]
    links: list[dict[str, Any]]
    attributes: dict[str, Any] = field(default_factory=dict)
    content: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    chat: Chat = field(default_factory=Chat)


def trace_runs(src: Source, trace_id: str) -> list[str]:
    """The runs a trace's spans belong to, earliest first (else the trace id itself: a third-party run)."""
    return [r["run_id"] for r in src.rows("trace_runs", {"trace_id": trace_id})]


def span_detail(src: Source, trace_id: str, span_id: str) -> SpanDetail | None:
    span = src.one("span_detail", {"trace_id": trace_id, "span_id": span_id})
    if span is None:
        return None
    run_id = span.get("run_id") or next(iter(trace_runs(src, trace_id)), trace_id)
    try:
        attrs = json.loads(span["attributes"] or "{}")
    except ValueError:
        attrs = {}
    attrs = attrs if isinstance(attrs, dict) else {}
    content: dict[str, list[tuple[str, str]]] = {"input": [], "output": []}
    for side, keys in CONTENT_KEYS.items():
        for key in attrs:
            if key in keys or any(key.startswith(k + ".") for k in keys):
                value = attrs[key]
                content[side].append((key, value if isinstance(value, str) else json.dumps(value, indent=2)))
    ids = {"trace_id": trace_id, "span_id": span_id}
    events = src.rows("span_events", ids)
    return SpanDetail(
        span,
        src.one("span_classified", {"run_id": run_id, **ids}),
        events,
        src.rows("span_links", ids),
        attrs,
        content,
        chat(attrs, events),
    )


@dataclass
class TraceDetail:
    """A trace's spans for a tree (run spans of each run in it, then raw spans no run placed; ``limit`` + 1
    when more exist), its handoff ``links`` and the runs it holds."""

    trace_id: str
    spans: list[dict[str, Any]]
    links: list[dict[str, Any]]
    run_ids: list[str]
    running: set[str] = field(default_factory=set)
    """Keys (``trace:span``) of the spans in progress (``spans_in_progress``)."""


def spans_in_progress(src: Source, run_id: str, trace_id: str | None = None) -> set[str]:
    """Keys (``trace:span``) of the run's spans in progress (of ``trace_id`` only, unless None): a span announced
    by a pending span that has not ended (docs/views-runs.md, "Runs in progress")."""
    rows = src.rows("spans_in_progress", {"run_id": run_id, "trace_id": trace_id})
    return {f"{r['trace_id']}:{r['span_id']}" for r in rows}


def trace_detail(src: Source, trace_id: str, limit: int = 500) -> TraceDetail:
    """Call it last on its cursor: a trace of one run is read through that run's scope (read/sql/run_scope.sql,
    the run classified once, as its Run page does), after which only that run's queries may use the cursor."""
    rows: list[dict[str, Any]] = []
    columns: list[str] = []
    running: set[str] = set()
    runs = trace_runs(src, trace_id)
    if len(runs) == 1:
        scope_run(src, runs[0])
    for run_id in runs:
        placed_rows = run_spans(src, run_id, trace_id, limit + 1)
        columns = columns or placed_rows.columns
        rows += placed_rows.dicts()
        running |= spans_in_progress(src, run_id, trace_id)
    placed = {r["span_id"] for r in rows}
    raw = src.rows("trace_raw_spans", {"trace_id": trace_id, "limit": limit + 1}, max_rows=limit + 1)
    # a span no run placed has the placed spans' fields too (unknown: None), so that every row reads alike
    rows += [dict.fromkeys(columns) | r for r in raw if r["span_id"] not in placed]
    rows.sort(key=lambda r: (r["start_ns"] or 0, -(r["end_ns"] or 0), r["span_id"]))
    links = src.rows("handoff_links", {"trace_ids": [trace_id]}) if rows else []
    return TraceDetail(trace_id, rows, links, sorted({r["run_id"] for r in rows if r.get("run_id")}), running)


def find_spans(src: Source, key: str, value: str | None, limit: int = 50) -> Table:
    """Spans whose attribute ``key`` is ``value`` as text (None: spans that carry the attribute at all), newest
    first, one row per span (its latest copy)."""
    return src.table("spans_by_attribute", {"key": key, "value": value, "limit": limit}, max_rows=limit)
