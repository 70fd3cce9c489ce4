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
from otel_agent.console.pages import int_arg, text_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read.search import find_in_traces
from otel_agent.read.spans import span_detail, trace_detail


async def span_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id, span_id = request.path_params["trace_id"], request.path_params["span_id"]
    details = await console.store.load(lambda q: span_detail(q, trace_id, span_id))
    if details is None:
        raise NotFoundError(f"no span {span_id!r} in trace {trace_id!r}")
    if request.query_params.get("fragment"):
        return console.html(request, viewer, "_span.html", d=details, data=details)
    return console.html(request, viewer, "span.html", active="runs", d=details, data=details)


async def trace_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id = request.path_params["trace_id"]
    limit = int_arg(request, "limit", 500, 50, tree.MAX_TREE)
    selected = request.query_params.get("span")
    find = text_arg(request, "find")

    def load(q: Any) -> dict[str, Any]:
        span = span_detail(q, trace_id, selected) if selected else None
        found = sorted(find_in_traces(q, [trace_id], find)) if find else []
        return {"trace": trace_detail(q, trace_id, limit), "span": span, "found": found}

    data = await console.store.load(load, key=("trace", trace_id, limit, selected, find))
    trace = data["trace"]
    if not trace.spans:
        raise NotFoundError(f"no spans stored for trace {trace_id!r}")
    rows = trace.spans
    more = len(rows) > limit
    key = tree.node_key(trace_id, selected) if selected else None
    view = tree.build(
        rows[:limit], tree.linked_keys(trace.links), window=tree.Window.parse(request.query_params.get("zoom")),
        found=set(data["found"]), selected=key,
    )  # fmt: skip
    return console.html(
        request, viewer, "trace.html", active="runs", trace_id=trace_id, view=view, nodes=view.nodes,
        axis=view.axis, more=more, limit=limit, links=trace.links, d=data["span"], run_ids=trace.run_ids,
        data=data, selected=key, base=f"/traces/{trace_id}", find=find, duration_ms=(view.t1 - view.t0) / 1e6,
    )  # fmt: skip


ROUTES = [
    ("/traces/{trace_id}", trace_page, ["GET"], "query"),
    ("/traces/{trace_id}/spans/{span_id}", span_page, ["GET"], "query"),
]
