"""``/memory``: memory proposals (pending first) with approve / reject and a rationale
(``POST /memory/{proposal_id}/review``), and the active memory items by scope.

Read: ``read.context`` (memory_page, proposal_detail). Templates: templates/memory.html, memory_proposal.html.
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
from otel_agent.read.context import MEMORY_STATUSES as STATUSES
from otel_agent.read.context import memory_page as read_memory
from otel_agent.read.context import proposal_detail


async def memory_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    status = choice_arg(request, "status", STATUSES)

    data = await console.store.load(lambda q: read_memory(q, status, limit, offset))
    proposals, page = paged(data.proposals, offset, limit)
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for item in data.items:
        for scope in item.get("scopes") or ["(unscoped)"]:
            by_scope.setdefault(scope, []).append(item)
    return console.html(
        request, viewer, "memory.html", active="memory", proposals=proposals, page=page, by_scope=by_scope,
        statuses=STATUSES, status=status, reviewed=request.query_params.get("reviewed"), reviews=[], data=data,
    )  # fmt: skip


async def proposal_page(request: Request, console: Any, viewer: Viewer) -> Response:
    proposal_id = request.path_params["proposal_id"]

    data = await console.store.load(lambda q: proposal_detail(q, proposal_id))
    if data is None:
        raise NotFoundError(f"no memory proposal {proposal_id!r}")
    return console.html(
        request, viewer, "memory_proposal.html", active="memory", p=data.proposal, reviews=data.reviews,
        reviewed=request.query_params.get("reviewed"), data=data,
    )  # fmt: skip


async def proposal_review(request: Request, console: Any, viewer: Viewer) -> Response:
    back = f"/memory/{quote_segment(request.path_params['proposal_id'])}"
    return await review_action(request, console, viewer, ("memory_proposal",), back)


ROUTES = [
    ("/memory", memory_page, ["GET"], "query"),
    ("/memory/{proposal_id}", proposal_page, ["GET"], "query"),
    ("/memory/{proposal_id}/review", proposal_review, ["POST"], "review"),
]
