"""``/runs/{run_id}`` Run: the run's header and derived metrics, its hierarchy as an expandable tree beside a
waterfall, the selected node's details, handoff links to other traces (both ways), cost by step / provider /
skill / tool, and the business timeline. ``/runs/{run_id}/bundle.json``: the run's JSON evidence bundle.
``/runs/{run_id}/tree?parent=KEY&lo=&hi=``: a node's children in the run's tree when it is sent in part.

Read: ``read.runs.run_detail`` (the run classified once, read/sql/run_scope.sql, then its summary, spans, links,
metrics, cost and timeline) and ``read.spans.span_detail``. Templates: templates/run.html, _tree.html, _span.html.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import charts, tree
from otel_agent.console.graph import agents_graph
from otel_agent.console.pages import int_arg, text_arg
from otel_agent.console.pages.trace import VIEWS, subtree_response
from otel_agent.console.render import fmt_usd
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read.artifacts import evidence_bundle
from otel_agent.read.runs import run_detail
from otel_agent.read.search import find_in_traces
from otel_agent.read.spans import span_detail, spans_in_progress


def _cost_charts(rows: list[dict[str, Any]]) -> list[charts.HBars]:
    out = []
    for title, key in (("Cost by step", "step_name"), ("Cost by provider / model", "provider_model"),
                       ("Cost by skill", "skill_ref"), ("Cost by tool", "tool_name")):  # fmt: skip
        sums: dict[Any, float] = defaultdict(float)
        for r in rows:
            if key == "tool_name" and r["item_type"] != "tool_invocation":
                continue
            if key == "provider_model":
                if r["item_type"] != "provider_call":
                    continue
                label = f"{r.get('provider') or '?'}/{r.get('model') or '?'}"
            else:
                label = r.get(key)
            sums[label] += float(r.get("cost_usd") or 0)
        out.append(charts.hbars(title, [{"label": k, "cost": v} for k, v in sums.items()], "label", "cost", fmt_usd))
    return out


async def _run_view(request: Request, console: Any, run_id: str) -> tuple[Any, tree.View, dict[str, Any]]:
    """The run (read once per run and limit, shared by the page and its tree's fragments through the result
    cache), its spans in progress, the selected span, the find-in-trace matches, and the tree."""
    limit = int_arg(request, "limit", tree.MAX_TREE, 50, tree.MAX_TREE)
    selected = request.query_params.get("span")  # trace_id:span_id

    def read(q: Any) -> tuple[Any, set[str]]:
        detail = run_detail(q, run_id, limit)
        return detail, (spans_in_progress(q, run_id) if detail is not None else set())

    jobs = [console.store.load(read, key=("run", run_id, limit))]
    if selected and ":" in selected:
        # On its own cursor: the selected span may belong to another run (span_classified reads its own run).
        trace_id, span_id = selected.split(":", 1)
        jobs.append(console.store.load(lambda q: span_detail(q, trace_id, span_id)))
    (data, running), *found = await asyncio.gather(*jobs)
    if data is None:
        raise NotFoundError(f"no run {run_id!r}")
    details = found[0] if found else None
    find = text_arg(request, "find")
    matches = (
        await console.store.load(lambda q: find_in_traces(q, data.traces, find), key=("run-find", run_id, find))
        if find
        else set()
    )
    view = VIEWS.build(
        data, data.spans[:limit], tree.linked_keys(data.links),
        window=tree.Window.parse(request.query_params.get("zoom")), found=matches, selected=selected, running=running,
    )  # fmt: skip
    ctx = {
        "run": data.run, "view": view, "nodes": view.nodes, "axis": view.axis, "more": len(data.spans) > limit,
        "limit": limit, "links": data.links, "d": details, "traces": data.traces, "selected": selected,
        "base": f"/runs/{run_id}", "find": find, "data": {"run": data, "span": details},
    }  # fmt: skip
    return data, view, ctx


async def run_page(request: Request, console: Any, viewer: Viewer) -> Response:
    data, _, ctx = await _run_view(request, console, request.path_params["run_id"])
    return console.html(
        request, viewer, "run.html", active="runs", metrics=data.metrics, cost_charts=_cost_charts(data.cost),
        timeline=data.timeline, graph=agents_graph(data.run, data.spans[: ctx["limit"]], data.links), **ctx,
    )  # fmt: skip


async def run_tree(request: Request, console: Any, viewer: Viewer) -> Response:
    """``/runs/{run_id}/tree?parent=KEY&lo=&hi=``: a node's children in the run's tree (pages/trace.py
    ``subtree_response``: rows for the script, or a page of that subtree)."""
    _, view, ctx = await _run_view(request, console, request.path_params["run_id"])
    return subtree_response(request, console, viewer, view, ctx)


async def bundle_download(request: Request, console: Any, viewer: Viewer) -> Response:
    run_id = request.path_params["run_id"]
    bundle = await console.store.load(lambda q: evidence_bundle(q, run_id))
    body = json.dumps(bundle, indent=2, sort_keys=True, ensure_ascii=False)
    return Response(
        body, media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="bundle.json"'},
    )  # fmt: skip


ROUTES = [
    ("/runs/{run_id}", run_page, ["GET"], "query"),
    ("/runs/{run_id}/tree", run_tree, ["GET"], "query"),
    ("/runs/{run_id}/bundle.json", bundle_download, ["GET"], "query"),
]
