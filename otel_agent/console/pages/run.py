"""``/runs/{run_id}`` Run: the run's header and derived metrics, its hierarchy as an expandable tree beside a
waterfall, the selected node's details, handoff links to other traces (both ways), cost by step / provider /
skill / tool, and the business timeline. ``/runs/{run_id}/bundle.json``: the run's JSON evidence bundle.

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
from otel_agent.console.render import fmt_usd
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read.artifacts import evidence_bundle
from otel_agent.read.runs import run_detail
from otel_agent.read.search import find_in_traces
from otel_agent.read.spans import span_detail


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


async def run_page(request: Request, console: Any, viewer: Viewer) -> Response:
    run_id = request.path_params["run_id"]
    limit = int_arg(request, "limit", 500, 50, tree.MAX_TREE)
    selected = request.query_params.get("span")  # trace_id:span_id
    jobs = [console.store.load(lambda q: run_detail(q, run_id, limit), key=("run", run_id, limit))]
    if selected and ":" in selected:
        # On its own cursor: the selected span may belong to another run (span_classified reads its own run).
        trace_id, span_id = selected.split(":", 1)
        jobs.append(console.store.load(lambda q: span_detail(q, trace_id, span_id)))
    data, *found = await asyncio.gather(*jobs)
    if data is None:
        raise NotFoundError(f"no run {run_id!r}")
    details = found[0] if found else None
    find = text_arg(request, "find")
    matches = await console.store.load(lambda q: find_in_traces(q, data.traces, find)) if find else set()
    view = tree.build(
        data.spans[:limit], tree.linked_keys(data.links), window=tree.Window.parse(request.query_params.get("zoom")),
        found=matches, selected=selected,
    )  # fmt: skip
    return console.html(
        request, viewer, "run.html", active="runs", run=data.run, view=view, nodes=view.nodes, axis=view.axis,
        more=len(data.spans) > limit, limit=limit, links=data.links, metrics=data.metrics,
        cost_charts=_cost_charts(data.cost), timeline=data.timeline, d=details, traces=data.traces,
        selected=selected, base=f"/runs/{run_id}", find=find, data={"run": data, "span": details},
        graph=agents_graph(data.run, data.spans[:limit], data.links),
    )  # fmt: skip


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
    ("/runs/{run_id}/bundle.json", bundle_download, ["GET"], "query"),
]
