"""``/runs/{run_id}`` Run: the run's header and derived metrics, its hierarchy as an expandable tree beside a
waterfall, the selected node's details, handoff links to other traces (both ways), cost by step / provider /
skill / tool, and the business timeline. ``/runs/{run_id}/bundle.json``: the run's JSON evidence bundle.

Queries: store/console/run_scope.sql (the run classified once, read by all of the run's queries),
run_summary.sql, run_spans.sql, handoff_links.sql, run_metrics.sql, run_cost.sql, run_timeline.sql (and
trace.py's span queries). Templates: templates/run.html, _tree.html, _span.html.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import charts, tree
from otel_agent.console.pages import int_arg
from otel_agent.console.pages.trace import MAX_TREE, linked_keys, span_details
from otel_agent.console.render import fmt_usd
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError


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
    limit = int_arg(request, "limit", 500, 50, MAX_TREE)
    selected = request.query_params.get("span")  # trace_id:span_id

    def load(q: Any) -> dict[str, Any] | None:
        # One classification of the run for the whole page (run_scope.sql): every per-run macro below reads
        # the cursor's copy of the run's classified and priced spans.
        q.scope("run_scope", console_run_id=run_id)
        run = q.one("run_summary", run_id=run_id)
        if run is None:
            return None
        rows = q.rows("run_spans", run_id=run_id, trace_id=None, limit=limit + 1)
        traces = sorted({r["trace_id"] for r in rows} | ({run["trace_id"]} if run.get("trace_id") else set()))
        return {"run": run, "rows": rows, "traces": traces, "links": q.rows("handoff_links", trace_ids=traces),
                "metrics": q.rows("run_metrics", run_id=run_id), "cost": q.rows("run_cost", run_id=run_id),
                "timeline": q.rows("run_timeline", run_id=run_id)}  # fmt: skip

    def details(q: Any) -> dict[str, Any] | None:
        # On its own cursor: the selected span may belong to another run (span_classified reads its own run).
        trace_id, span_id = selected.split(":", 1)  # type: ignore[union-attr]
        return span_details(q, trace_id, span_id)

    jobs = [console.store.load(load, key=("run", run_id, limit))]
    if selected and ":" in selected:
        jobs.append(console.store.load(details))
    main, *found = await asyncio.gather(*jobs)
    if main is None:
        raise NotFoundError(f"no run {run_id!r}")
    data = {**main, "details": found[0] if found else None}
    rows = data["rows"]
    nodes, t0, t1 = tree.build(rows[:limit], linked_keys(data["links"]))
    return console.html(
        request, viewer, "run.html", active="runs", run=data["run"], nodes=nodes, axis=tree.axis(t0, t1),
        more=len(rows) > limit, limit=limit, links=data["links"], metrics=data["metrics"],
        cost_charts=_cost_charts(data["cost"]), timeline=data["timeline"], d=data["details"], traces=data["traces"],
        selected=selected, base=f"/runs/{run_id}",
    )  # fmt: skip


async def bundle_download(request: Request, console: Any, viewer: Viewer) -> Response:
    from otel_agent.export.bundle import build_bundle

    run_id = request.path_params["run_id"]
    bundle = await console.store.load(lambda q: build_bundle(q.reader(), run_id))
    body = json.dumps(bundle, indent=2, sort_keys=True, ensure_ascii=False)
    return Response(
        body, media_type="application/json",
        headers={"Content-Disposition": 'attachment; filename="bundle.json"'},
    )  # fmt: skip


ROUTES = [
    ("/runs/{run_id}", run_page, ["GET"], "query"),
    ("/runs/{run_id}/bundle.json", bundle_download, ["GET"], "query"),
]
