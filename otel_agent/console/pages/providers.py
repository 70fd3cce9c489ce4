"""``/providers`` Observability: provider / model health (calls, error rate, latency p50/p95, fallbacks in/out,
tokens), the LLM proxy's requests per client / provider / model (seed 000's proxy metrics), skill health and tool
usage over a chosen time range, with charts. Without ``from`` / ``to`` the page shows the last 24 hours
(``DEFAULT_RANGE``) and says so; ``?range=all`` asks for all time (on a large store, seconds: every span that may
be a call, skill or tool is parsed, once).

Queries: store/console/health_scope.sql (without the maintained state: the spans parsed once for the health
macros, the window applied before they are; with it the macros read the window's maintained facts),
providers_health.sql, proxy_health.sql, skills_health.sql, tools_usage.sql. Template: templates/providers.html.
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
from otel_agent.store.maintained import reads_maintained_runs

DEFAULT_RANGE = _dt.timedelta(hours=24)
"""The range shown when the URL names none: bounded, so the page never parses the whole store by default."""


async def providers_page(request: Request, console: Any, viewer: Viewer) -> Response:
    window = {"t0": time_arg(request, "from"), "t1": time_arg(request, "to")}
    all_time = request.query_params.get("range") == "all"
    default = window["t0"] is None and window["t1"] is None and not all_time
    if default:
        window["t0"] = _dt.datetime.now(_dt.UTC).replace(tzinfo=None) - DEFAULT_RANGE

    def load(q: Any) -> dict[str, Any]:
        # The proxy table reads the priced run views (columns the health scope does not keep): before the scope.
        proxy = q.rows("proxy_health", **window)
        if not reads_maintained_runs(q.cursor):  # else the health views read the maintained facts of the window
            q.scope("health_scope", console_t0=window["t0"], console_t1=window["t1"])  # all time too: one parse
        data = {
            "providers": q.rows("providers_health", **window),
            "proxy": proxy,
            "skills": q.rows("skills_health", **window),
            "tools": q.rows("tools_usage", **window),
        }
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
        default_range=default, **data,
    )  # fmt: skip


ROUTES = [("/providers", providers_page, ["GET"], "query")]
