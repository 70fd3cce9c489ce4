"""``/`` Runs: recent runs with filters, sorting, pagination and a chart of runs, cost and errors over time.

Read: ``read.runs.search_runs`` (read/sql/runs_list.sql, runs_chart.sql, runs_services.sql). Template:
templates/runs.html.
"""

from __future__ import annotations

import datetime as _dt
import time as _time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import charts
from otel_agent.console.pages import choice_arg, page_args, paged, text_arg, time_arg
from otel_agent.console.render import fmt_num, fmt_ts, fmt_usd
from otel_agent.console.security import Viewer
from otel_agent.read.runs import SORTS, STATUSES, RunFilter, RunsPage, search_runs


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
    )

    def load(q: Any) -> RunsPage:
        return search_runs(q, where, sort=sort or "start", desc=desc, limit=limit, offset=offset, chart=True)

    args = (limit, offset, sort, desc, where)
    live = await console.store.call(console.store.runs_maintained)
    if live:  # the runs view reads the maintained rows: a page costs what it shows, and is as new as the store
        taken_at = _time.time()
        data = await console.store.load(load, key=("runs", *args))
    else:  # runs computed from raw (the state is being built, or live ∪ archive): a copy, refreshed on demand
        refresh = request.query_params.get("refresh") == "1"
        data, taken_at = await console.store.from_snapshot("runs", load, refresh=refresh, args=args)
        if data is None:  # the first copy of the runs view is still being taken (a large store)
            return console.html(request, viewer, "runs_pending.html", active="runs")
    rows, page = paged(data.rows, offset, limit)
    buckets = data.buckets
    chart_runs = charts.column_chart("Runs (failed in red)", buckets, "runs", fmt_ts, fmt_num, highlight="failed_runs")
    chart_cost = charts.column_chart("Cost", buckets, "cost_usd", fmt_ts, fmt_usd, cls="alt")
    chart_errors = charts.column_chart("Spans in error", buckets, "errors", fmt_ts, fmt_num, cls="warn")
    as_of = _dt.datetime.fromtimestamp(taken_at, _dt.UTC)
    return console.html(
        request, viewer, "runs.html", active="runs", rows=rows, page=page, sort=sort, desc=desc,
        services=data.services, statuses=STATUSES, charts=[chart_runs, chart_cost, chart_errors],
        as_of=as_of, live=live,
        data={"runs": rows, "page": page, "buckets": buckets, "services": data.services, "as_of": as_of, "live": live},
    )  # fmt: skip


ROUTES = [("/", runs_page, ["GET"], "query")]
