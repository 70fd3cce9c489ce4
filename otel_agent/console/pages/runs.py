"""``/`` Runs: recent runs with filters, sorting, pagination and a chart of runs, cost and errors over time; runs
that are the key of a firing alert marked; live while open.

Live: ``/?…&fragment=live`` is the same page (same arguments, same reads, same cache) rendered as its live part
only (templates/_runs_live.html: the charts, the rows, the pager), which console.js fetches every few seconds
while the page is visible and swaps in — one template renders the rows either way, and without JavaScript a
reload shows the same.

Read: ``read.runs.search_runs`` (read/sql/runs_list.sql, runs_chart.sql, runs_services.sql) and
``read.alerts.firing_by_key`` (the marks; never cached: an alert event is not a commit the result cache sees).
Templates: templates/runs.html, _runs_live.html.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import time as _time
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from otel_agent.console import charts
from otel_agent.console.as_json import wants_json
from otel_agent.console.pages import choice_arg, page_args, paged, text_arg, time_arg
from otel_agent.console.render import fmt_num, fmt_ts, fmt_usd, render
from otel_agent.console.security import Viewer
from otel_agent.read.alerts import RUN_KINDS, firing_by_key
from otel_agent.read.runs import SORTS, STATUSES, RunFilter, RunsPage, search_runs

LIVE_SECONDS = 5
"""How often an open runs page (and a running run's page) fetches its live part (console.js)."""


async def runs_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    sort = choice_arg(request, "sort", SORTS, "start")
    desc = request.query_params.get("dir", "desc") != "asc"
    where = RunFilter(
        status=choice_arg(request, "status", STATUSES),
        service=text_arg(request, "service"),
        text=text_arg(request, "q"),
        t0=time_arg(request, "from"),
        t1=time_arg(request, "to"),
        run_id=text_arg(request, "run"),
    )

    def load(q: Any) -> RunsPage:
        return search_runs(q, where, sort=sort or "start", desc=desc, limit=limit, offset=offset, chart=True)

    args = (limit, offset, sort, desc, where)
    marks_job = asyncio.ensure_future(console.store.load(lambda q: firing_by_key(q, RUN_KINDS)))
    live = await console.store.call(console.store.runs_maintained)
    if live:  # the runs view reads the maintained rows: a page costs what it shows, and is as new as the store
        taken_at = _time.time()
        data = await console.store.load(load, key=("runs", *args))
    else:  # runs computed from raw (the state is being built, or live ∪ archive): a copy, refreshed on demand
        refresh = request.query_params.get("refresh") == "1"
        data, taken_at = await console.store.from_snapshot("runs", load, refresh=refresh, args=args)
        if data is None:  # the first copy of the runs view is still being taken (a large store)
            marks_job.cancel()
            return console.html(request, viewer, "runs_pending.html", active="runs")
    rows, page = paged(data.rows, offset, limit)
    marks = await marks_job
    buckets = data.buckets
    chart_runs = charts.column_chart("Runs (failed in red)", buckets, "runs", fmt_ts, fmt_num, highlight="failed_runs")
    chart_cost = charts.column_chart("Cost", buckets, "cost_usd", fmt_ts, fmt_usd, cls="alt")
    chart_errors = charts.column_chart("Spans in error", buckets, "errors", fmt_ts, fmt_num, cls="warn")
    as_of = _dt.datetime.fromtimestamp(taken_at, _dt.UTC)
    ctx = dict(
        active="runs", rows=rows, page=page, sort=sort, desc=desc, services=data.services, statuses=STATUSES,
        charts=[chart_runs, chart_cost, chart_errors], as_of=as_of, live=live, marks=marks, live_seconds=LIVE_SECONDS,
    )  # fmt: skip
    if request.query_params.get("fragment") == "live" and not wants_json(request):
        links = {k: v for k, v in request.query_params.items() if k != "fragment"}  # the page's own links
        body = render("_runs_live.html", request=request, viewer=viewer, console=console, args=links, **ctx)
        return HTMLResponse(body)
    return console.html(
        request, viewer, "runs.html", **ctx,
        data={"runs": rows, "page": page, "buckets": buckets, "services": data.services, "as_of": as_of, "live": live,
              "alerts": {r["run_id"]: [m.rule for m in marks[r["run_id"]]] for r in rows if r["run_id"] in marks}},
    )  # fmt: skip


ROUTES = [("/", runs_page, ["GET"], "query")]
