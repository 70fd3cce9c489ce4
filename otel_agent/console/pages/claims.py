"""``/claims`` Evidence: claims with status and confidence; ``/claims/{claim_id}``: the lineage claim → citations
→ evidence items → sources, conflicts, review history with the preserved original, and approve / reject /
annotate on the claim and its evidence, acknowledge / resolve on conflicts (``POST /claims/{claim_id}/review``).

Read: ``read.evidence`` (claims_page, claim_counts, claim_detail). Templates: templates/claims.html, claim.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.graph import lineage_graph
from otel_agent.console.pages import choice_arg, page_args, paged, text_arg
from otel_agent.console.render import q as quote_segment
from otel_agent.console.reviews import review_action
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read import evidence
from otel_agent.read.evidence import CLAIM_STATUSES as STATUSES


async def claims_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    status = choice_arg(request, "status", STATUSES)

    text, run_id = text_arg(request, "q"), text_arg(request, "run")

    def load(q: Any) -> dict[str, Any]:
        rows = evidence.claims_page(q, status=status, text=text, run_id=run_id, limit=limit, offset=offset)
        return {"rows": rows, "counts": evidence.claim_counts(q)}

    data = await console.store.load(load)
    rows, page = paged(data["rows"], offset, limit)
    return console.html(
        request, viewer, "claims.html", active="claims", rows=rows, page=page, counts=data["counts"],
        statuses=STATUSES, status=status,
    )  # fmt: skip


async def claim_page(request: Request, console: Any, viewer: Viewer) -> Response:
    claim_id = request.path_params["claim_id"]

    data = await console.store.load(lambda q: evidence.claim_detail(q, claim_id), key=("claim", claim_id))
    if data is None:
        raise NotFoundError(f"no claim {claim_id!r}")
    return console.html(
        request, viewer, "claim.html", active="claims", claim=data.lineage.claim, lineage=data.lineage,
        conflicts=data.conflicts, reviews=data.reviews, action=f"/claims/{quote_segment(claim_id)}/review",
        graph=lineage_graph(data.lineage, data.conflicts),
        reviewed=request.query_params.get("reviewed"), data=data,
    )  # fmt: skip


async def claim_review(request: Request, console: Any, viewer: Viewer) -> Response:
    back = f"/claims/{quote_segment(request.path_params['claim_id'])}"
    return await review_action(request, console, viewer, ("claim", "evidence_item", "conflict"), back)


ROUTES = [
    ("/claims", claims_page, ["GET"], "query"),
    ("/claims/{claim_id}", claim_page, ["GET"], "query"),
    ("/claims/{claim_id}/review", claim_review, ["POST"], "review"),
]
