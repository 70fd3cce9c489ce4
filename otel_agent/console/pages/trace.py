"""``/traces/{trace_id}`` Trace: any trace as tree + waterfall (third-party spans of no recognised run too), and
``/traces/{trace_id}/spans/{span_id}`` the details of one span (attributes, events, links, status, tokens, cost,
captured input/output), as a page or, with ``?fragment=1``, as the panel the run and trace pages load.

Queries: store/console/trace_runs.sql, run_spans.sql (with $trace_id), trace_raw_spans.sql, handoff_links.sql,
span_detail.sql, span_classified.sql, span_events.sql, span_links.sql. Templates: templates/trace.html,
_tree.html, _span.html.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import tree
from otel_agent.console.pages import int_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError

# Attributes that carry captured content (only stored when the instrumentation captures it).
CONTENT_KEYS = {
    "input": ("gen_ai.input.messages", "gen_ai.system_instructions", "input.value", "gen_ai.prompt",
              "llm.input_messages", "otel_agent.tool.input", "gen_ai.tool.call.arguments"),
    "output": ("gen_ai.output.messages", "output.value", "gen_ai.completion", "llm.output_messages",
               "otel_agent.tool.output", "gen_ai.tool.call.result"),
}  # fmt: skip
MAX_TREE = 5000


def span_details(q: Any, trace_id: str, span_id: str) -> dict[str, Any] | None:
    span = q.one("span_detail", trace_id=trace_id, span_id=span_id)
    if span is None:
        return None
    run_id = span.get("run_id") or next(iter(r["run_id"] for r in q.rows("trace_runs", trace_id=trace_id)), trace_id)
    attrs = json.loads(span["attributes"] or "{}")
    content: dict[str, list[tuple[str, str]]] = {"input": [], "output": []}
    for side, keys in CONTENT_KEYS.items():
        for key in attrs:
            if key in keys or any(key.startswith(k + ".") for k in keys):
                value = attrs[key]
                content[side].append((key, value if isinstance(value, str) else json.dumps(value, indent=2)))
    return {
        "span": span,
        "classified": q.one("span_classified", run_id=run_id, trace_id=trace_id, span_id=span_id),
        "events": q.rows("span_events", trace_id=trace_id, span_id=span_id),
        "links": q.rows("span_links", trace_id=trace_id, span_id=span_id),
        "content": content,
    }


async def span_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id, span_id = request.path_params["trace_id"], request.path_params["span_id"]
    details = await console.store.load(lambda q: span_details(q, trace_id, span_id))
    if details is None:
        raise NotFoundError(f"no span {span_id!r} in trace {trace_id!r}")
    if request.query_params.get("fragment"):
        return console.html(request, viewer, "_span.html", d=details)
    return console.html(request, viewer, "span.html", active="runs", d=details)


def linked_keys(links: list[dict[str, Any]]) -> set[str]:
    return {tree.node_key(lk["trace_id"], lk["span_id"]) for lk in links}


async def trace_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id = request.path_params["trace_id"]
    limit = int_arg(request, "limit", 500, 50, MAX_TREE)
    selected = request.query_params.get("span")

    def load(q: Any) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        for run in q.rows("trace_runs", trace_id=trace_id):
            rows += q.rows("run_spans", run_id=run["run_id"], trace_id=trace_id, limit=limit + 1)
        placed = {r["span_id"] for r in rows}
        rows += [r for r in q.rows("trace_raw_spans", trace_id=trace_id, limit=limit + 1) if r["span_id"] not in placed]
        rows.sort(key=lambda r: (r["start_ns"] or 0, -(r["end_ns"] or 0), r["span_id"]))
        links = q.rows("handoff_links", trace_ids=[trace_id]) if rows else []
        details = span_details(q, trace_id, selected) if selected else None
        return {"rows": rows, "links": links, "details": details}

    data = await console.store.load(load, key=("trace", trace_id, limit, selected))
    if not data["rows"]:
        raise NotFoundError(f"no spans stored for trace {trace_id!r}")
    rows = data["rows"]
    more = len(rows) > limit
    nodes, t0, t1 = tree.build(rows[:limit], linked_keys(data["links"]))
    run_ids = sorted({r["run_id"] for r in rows if r.get("run_id")})
    return console.html(
        request, viewer, "trace.html", active="runs", trace_id=trace_id, nodes=nodes, axis=tree.axis(t0, t1),
        more=more, limit=limit, links=data["links"], d=data["details"], run_ids=run_ids,
        selected=tree.node_key(trace_id, selected) if selected else None, base=f"/traces/{trace_id}",
        duration_ms=(t1 - t0) / 1e6,
    )  # fmt: skip


ROUTES = [
    ("/traces/{trace_id}", trace_page, ["GET"], "query"),
    ("/traces/{trace_id}/spans/{span_id}", span_page, ["GET"], "query"),
]
