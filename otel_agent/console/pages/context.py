"""``/context``: context snapshots with budget vs used per block type (bars) and the compressions.

Read: ``read.context.context_page``. Template: templates/context.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import page_args, paged, text_arg
from otel_agent.console.security import Viewer
from otel_agent.read.context import context_page as read_context


async def context_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request, 20, 100)

    run_id = text_arg(request, "run")
    data = await console.store.load(lambda q: read_context(q, run_id, limit, offset))
    snapshots, page = paged(data.snapshots, offset, limit)
    for s in snapshots:
        allocs = s["allocation_rows"]
        top = max(
            [float(a["budget_tokens"] or 0) for a in allocs] + [float(a["used_tokens"] or 0) for a in allocs] + [1]
        )
        s["allocations"] = [
            {**a, "budget_pct": round(100 * float(a["budget_tokens"] or 0) / top, 2),
             "used_pct": round(100 * float(a["used_tokens"] or 0) / top, 2),
             "over": (a["used_tokens"] or 0) > (a["budget_tokens"] or 0)}
            for a in allocs
        ]  # fmt: skip
        s["compression_list"] = s["compression_rows"]
    return console.html(
        request, viewer, "context.html", active="context", snapshots=snapshots, page=page, data=data.snapshots[:limit]
    )


ROUTES = [("/context", context_page, ["GET"], "query")]
