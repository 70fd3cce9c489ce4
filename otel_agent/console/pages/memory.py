"""``/memory``: memory proposals (pending first) with approve / reject and a rationale
(``POST /memory/{proposal_id}/review``), and the active memory items by scope.

Queries: store/console/memory_proposals.sql, memory_items.sql, memory_proposal.sql, record_reviews.sql.
Template: templates/memory.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import choice_arg, page_args, paged
from otel_agent.console.render import q as quote_segment
from otel_agent.console.reviews import review_action
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError

STATUSES = ("pending", "approved", "rejected")


async def memory_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    status = choice_arg(request, "status", STATUSES)

    def load(q: Any) -> dict[str, Any]:
        return {
            "proposals": q.rows("memory_proposals", status=status, limit=limit + 1, offset=offset),
            "items": q.rows("memory_items"),
        }

    data = await console.store.load(load)
    proposals, page = paged(data["proposals"], offset, limit)
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for item in data["items"]:
        for scope in item.get("scopes") or ["(unscoped)"]:
            by_scope.setdefault(scope, []).append(item)
    return console.html(
        request, viewer, "memory.html", active="memory", proposals=proposals, page=page, by_scope=by_scope,
        statuses=STATUSES, status=status, reviewed=request.query_params.get("reviewed"), reviews=[],
    )  # fmt: skip


async def proposal_page(request: Request, console: Any, viewer: Viewer) -> Response:
    proposal_id = request.path_params["proposal_id"]

    def load(q: Any) -> dict[str, Any] | None:
        proposal = q.one("memory_proposal", proposal_id=proposal_id)
        if proposal is None:
            return None
        return {"proposal": proposal, "reviews": q.rows("record_reviews", ids=[proposal_id])}

    data = await console.store.load(load)
    if data is None:
        raise NotFoundError(f"no memory proposal {proposal_id!r}")
    return console.html(
        request, viewer, "memory_proposal.html", active="memory", p=data["proposal"], reviews=data["reviews"],
        reviewed=request.query_params.get("reviewed"),
    )  # fmt: skip


async def proposal_review(request: Request, console: Any, viewer: Viewer) -> Response:
    back = f"/memory/{quote_segment(request.path_params['proposal_id'])}"
    return await review_action(request, console, viewer, ("memory_proposal",), back)


ROUTES = [
    ("/memory", memory_page, ["GET"], "query"),
    ("/memory/{proposal_id}", proposal_page, ["GET"], "query"),
    ("/memory/{proposal_id}/review", proposal_review, ["POST"], "review"),
]
