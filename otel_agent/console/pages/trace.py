"""``/traces/{trace_id}`` Trace: any trace as tree + waterfall (third-party spans of no recognised run too), and
``/traces/{trace_id}/spans/{span_id}`` the details of one span (attributes, events, links, status, tokens, cost,
captured input/output), as a page or, with ``?fragment=1``, as the panel the run and trace pages load.

Read: ``read.spans.trace_detail`` and ``read.spans.span_detail``. Templates: templates/trace.html, span.html,
_tree.html, _span.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import tree
from otel_agent.console.pages import int_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read.runs import MAX_TREE
from otel_agent.read.spans import span_detail, trace_detail


async def span_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id, span_id = request.path_params["trace_id"], request.path_params["span_id"]
    details = await console.store.load(lambda q: span_detail(q, trace_id, span_id))
    if details is None:
        raise NotFoundError(f"no span {span_id!r} in trace {trace_id!r}")
    if request.query_params.get("fragment"):
        return console.html(request, viewer, "_span.html", d=details, data=details)
    return console.html(request, viewer, "span.html", active="runs", d=details, data=details)


def linked_keys(links: list[dict[str, Any]]) -> set[str]:
    return {tree.node_key(lk["trace_id"], lk["span_id"]) for lk in links}


async def trace_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id = request.path_params["trace_id"]
    limit = int_arg(request, "limit", 500, 50, MAX_TREE)
    selected = request.query_params.get("span")

    def load(q: Any) -> dict[str, Any]:
        span = span_detail(q, trace_id, selected) if selected else None
        return {"trace": trace_detail(q, trace_id, limit), "span": span}

    data = await console.store.load(load, key=("trace", trace_id, limit, selected))
    trace = data["trace"]
    if not trace.spans:
        raise NotFoundError(f"no spans stored for trace {trace_id!r}")
    rows = trace.spans
    more = len(rows) > limit
    nodes, t0, t1 = tree.build(rows[:limit], linked_keys(trace.links))
    return console.html(
        request, viewer, "trace.html", active="runs", trace_id=trace_id, nodes=nodes, axis=tree.axis(t0, t1),
        more=more, limit=limit, links=trace.links, d=data["span"], run_ids=trace.run_ids, data=data,
        selected=tree.node_key(trace_id, selected) if selected else None, base=f"/traces/{trace_id}",
        duration_ms=(t1 - t0) / 1e6,
    )  # fmt: skip


ROUTES = [
    ("/traces/{trace_id}", trace_page, ["GET"], "query"),
    ("/traces/{trace_id}/spans/{span_id}", span_page, ["GET"], "query"),
]
