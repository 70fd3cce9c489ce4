"""``/providers`` Observability: provider / model health (calls, error rate, latency p50/p95, fallbacks in/out,
tokens), the LLM proxy's requests per client / provider / model (seed 000's proxy metrics), skill health and tool
usage over a chosen time range, with charts. Without ``from`` / ``to`` the page shows the last 24 hours
(``DEFAULT_RANGE``) and says so; ``?range=all`` asks for all time (on a large store, seconds: every span that may
be a call, skill or tool is parsed, once).

Read: ``read.health.health`` (with the maintained state the macros read the window's maintained facts; without
it the spans are parsed once for them, the window applied before they are: read/sql/health_scope.sql). Template:
templates/providers.html.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import charts
from otel_agent.console.pages import time_arg
from otel_agent.console.render import fmt_ms, fmt_num
from otel_agent.console.security import Viewer
from otel_agent.read.health import health

DEFAULT_RANGE = _dt.timedelta(hours=24)
"""The range shown when the URL names none: bounded, so the page never parses the whole store by default."""


async def providers_page(request: Request, console: Any, viewer: Viewer) -> Response:
    window = {"t0": time_arg(request, "from"), "t1": time_arg(request, "to")}
    all_time = request.query_params.get("range") == "all"
    default = window["t0"] is None and window["t1"] is None and not all_time
    if default:
        window["t0"] = _dt.datetime.now(_dt.UTC).replace(tzinfo=None) - DEFAULT_RANGE

    def load(q: Any) -> dict[str, Any]:
        found = health(q, window["t0"], window["t1"])
        data = {"providers": found.providers, "proxy": found.proxy, "skills": found.skills, "tools": found.tools}
        for p in data["providers"]:
            p["label"] = f"{p.get('provider') or '?'}/{p.get('model') or '?'}"
        for t in data["tools"]:
            t["label"] = t.get("tool_name") or "?"
        return data

    # reused results (ResultCache) for a named window or all time; the default window moves with the clock
    data = await console.store.load(load, key=None if default else ("providers", window["t0"], window["t1"]))
    chart_list = [
        charts.hbars("Calls by provider / model (errors darker)", data["providers"], "label", "calls", fmt_num,
                     second="errors"),
        charts.hbars("p95 latency by provider / model", data["providers"], "label", "p95_latency_ms", fmt_ms),
        charts.hbars("Tool calls (errors darker)", data["tools"], "label", "calls", fmt_num, second="errors"),
    ]  # fmt: skip
    return console.html(
        request, viewer, "providers.html", active="providers", charts=chart_list,
        default_range=default, data={"from": window["t0"], "to": window["t1"], **data}, **data,
    )  # fmt: skip


ROUTES = [("/providers", providers_page, ["GET"], "query")]
