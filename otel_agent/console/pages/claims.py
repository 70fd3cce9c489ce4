"""``/claims`` Evidence: claims with status and confidence; ``/claims/{claim_id}``: the lineage claim → citations
→ evidence items → sources, conflicts, review history with the preserved original, and approve / reject /
annotate on the claim and its evidence, acknowledge / resolve on conflicts (``POST /claims/{claim_id}/review``).

Queries: store/console/claims_list.sql, claims_counts.sql, claim_lineage.sql, claim_conflict_keys.sql (whether
any conflict names the claim or its evidence: if none, claim_conflicts.sql is not asked), claim_conflicts.sql,
record_reviews.sql. Templates: templates/claims.html, claim.html.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import choice_arg, page_args, paged, text_arg
from otel_agent.console.render import q as quote_segment
from otel_agent.console.reviews import review_action
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError

STATUSES = ("supported", "unverified", "conflicted", "rejected")


async def claims_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    status = choice_arg(request, "status", STATUSES)

    def load(q: Any) -> dict[str, Any]:
        return {
            "rows": q.rows(
                "claims_list",
                status=status,
                text=text_arg(request, "q"),
                run_id=text_arg(request, "run"),
                limit=limit + 1,
                offset=offset,
            ),
            "counts": {r["status"]: r["n"] for r in q.rows("claims_counts")},
        }

    data = await console.store.load(load)
    rows, page = paged(data["rows"], offset, limit)
    return console.html(
        request, viewer, "claims.html", active="claims", rows=rows, page=page, counts=data["counts"],
        statuses=STATUSES, status=status,
    )  # fmt: skip


def _lineage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Group the lineage paths: one claim, its citations, distinct evidence items and sources."""
    citations, evidence, sources = {}, {}, {}
    for r in rows:
        if r.get("citation_id"):
            citations[r["citation_id"]] = r
        if r.get("evidence_id"):
            evidence.setdefault(r["evidence_id"], r)
        if r.get("source_id"):
            sources.setdefault(r["source_id"], r)
    return {
        "citations": list(citations.values()),
        "evidence": list(evidence.values()),
        "sources": list(sources.values()),
    }


async def claim_page(request: Request, console: Any, viewer: Viewer) -> Response:
    claim_id = request.path_params["claim_id"]

    def load(q: Any) -> dict[str, Any] | None:
        paths = q.rows("claim_lineage", claim_id=claim_id)
        if not paths:
            return None
        evidence_ids = sorted({p["evidence_id"] for p in paths if p.get("evidence_id")})
        named = q.one("claim_conflict_keys", ids=[claim_id, *evidence_ids])
        conflicts = q.rows("claim_conflicts", claim_id=claim_id, evidence_ids=evidence_ids) if named["n"] else []
        ids = [claim_id, *evidence_ids, *(c["conflict_id"] for c in conflicts)]
        return {"paths": paths, "conflicts": conflicts, "reviews": q.rows("record_reviews", ids=ids)}

    data = await console.store.load(load, key=("claim", claim_id))
    if data is None:
        raise NotFoundError(f"no claim {claim_id!r}")
    claim = data["paths"][0]
    return console.html(
        request, viewer, "claim.html", active="claims", claim=claim, lineage=_lineage(data["paths"]),
        conflicts=data["conflicts"], reviews=data["reviews"], action=f"/claims/{quote_segment(claim_id)}/review",
        reviewed=request.query_params.get("reviewed"),
    )  # fmt: skip


async def claim_review(request: Request, console: Any, viewer: Viewer) -> Response:
    back = f"/claims/{quote_segment(request.path_params['claim_id'])}"
    return await review_action(request, console, viewer, ("claim", "evidence_item", "conflict"), back)


ROUTES = [
    ("/claims", claims_page, ["GET"], "query"),
    ("/claims/{claim_id}", claim_page, ["GET"], "query"),
    ("/claims/{claim_id}/review", claim_review, ["POST"], "review"),
]
