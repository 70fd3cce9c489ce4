"""``/providers`` Observability: provider / model health (calls, error rate, latency p50/p95, fallbacks in/out,
tokens), skill health and tool usage over a chosen time range, with charts.

Queries: store/console/providers_health.sql, skills_health.sql, tools_usage.sql. Template: templates/providers.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import charts
from otel_agent.console.pages import time_arg
from otel_agent.console.render import fmt_ms, fmt_num
from otel_agent.console.security import Viewer


async def providers_page(request: Request, console: Any, viewer: Viewer) -> Response:
    window = {"t0": time_arg(request, "from"), "t1": time_arg(request, "to")}

    def load(q: Any) -> dict[str, Any]:
        return {
            "providers": q.rows("providers_health", **window),
            "skills": q.rows("skills_health", **window),
            "tools": q.rows("tools_usage", **window),
        }

    data = await console.store.load(load)
    for p in data["providers"]:
        p["label"] = f"{p.get('provider') or '?'}/{p.get('model') or '?'}"
    for t in data["tools"]:
        t["label"] = t.get("tool_name") or "?"
    chart_list = [
        charts.hbars("Calls by provider / model (errors darker)", data["providers"], "label", "calls", fmt_num,
                     second="errors"),
        charts.hbars("p95 latency by provider / model", data["providers"], "label", "p95_latency_ms", fmt_ms),
        charts.hbars("Tool calls (errors darker)", data["tools"], "label", "calls", fmt_num, second="errors"),
    ]  # fmt: skip
    return console.html(request, viewer, "providers.html", active="providers", charts=chart_list, **data)


ROUTES = [("/providers", providers_page, ["GET"], "query")]
