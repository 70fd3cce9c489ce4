"""``/context``: context snapshots with budget vs used per block type (bars) and the compressions.

Queries: store/console/context_snapshots.sql, context_allocations.sql, context_compressions.sql. Template:
templates/context.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import page_args, paged, text_arg
from otel_agent.console.security import Viewer


async def context_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request, 20, 100)

    def load(q: Any) -> dict[str, Any]:
        snaps = q.rows("context_snapshots", run_id=text_arg(request, "run"), limit=limit + 1, offset=offset)
        ids = [s["snapshot_id"] for s in snaps[:limit]]
        return {
            "snapshots": snaps,
            "allocations": q.rows("context_allocations", snapshot_ids=ids) if ids else [],
            "compressions": q.rows("context_compressions", snapshot_ids=ids) if ids else [],
        }

    data = await console.store.load(load)
    snapshots, page = paged(data["snapshots"], offset, limit)
    for s in snapshots:
        allocs = [a for a in data["allocations"] if a["snapshot_id"] == s["snapshot_id"]]
        top = max(
            [float(a["budget_tokens"] or 0) for a in allocs] + [float(a["used_tokens"] or 0) for a in allocs] + [1]
        )
        s["allocations"] = [
            {**a, "budget_pct": round(100 * float(a["budget_tokens"] or 0) / top, 2),
             "used_pct": round(100 * float(a["used_tokens"] or 0) / top, 2),
             "over": (a["used_tokens"] or 0) > (a["budget_tokens"] or 0)}
            for a in allocs
        ]  # fmt: skip
        s["compression_list"] = [c for c in data["compressions"] if c["snapshot_id"] == s["snapshot_id"]]
    return console.html(request, viewer, "context.html", active="context", snapshots=snapshots, page=page)


ROUTES = [("/context", context_page, ["GET"], "query")]
