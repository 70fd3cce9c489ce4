"""Context and memory: context snapshots with their allocations and compressions, memory proposals and the
items memory holds (docs/views-evidence.md "Context", "Memory").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from otel_agent.read.evidence import record_reviews
from otel_agent.read.source import Source

MEMORY_STATUSES = ("pending", "approved", "rejected")


@dataclass
class ContextPage:
    """One page of snapshots (``limit`` + 1 when more exist), each row with its allocations and compressions
    added as lists (``allocation_rows``, ``compression_rows``)."""

    snapshots: list[dict[str, Any]]


def context_page(src: Source, run_id: str | None, limit: int, offset: int) -> ContextPage:
    snaps = src.rows("context_snapshots", {"run_id": run_id, "limit": limit + 1, "offset": offset}, max_rows=limit + 1)
    ids = [s["snapshot_id"] for s in snaps[:limit]]
    allocations = src.rows("context_allocations", {"snapshot_ids": ids}) if ids else []
    compressions = src.rows("context_compressions", {"snapshot_ids": ids}) if ids else []
    for s in snaps:
        s["allocation_rows"] = [a for a in allocations if a["snapshot_id"] == s["snapshot_id"]]
        s["compression_rows"] = [c for c in compressions if c["snapshot_id"] == s["snapshot_id"]]
    return ContextPage(snaps)


@dataclass
class MemoryPage:
    """Proposals (pending first; ``limit`` + 1 when more exist) and the items memory holds."""

    proposals: list[dict[str, Any]]
    items: list[dict[str, Any]]


def memory_page(src: Source, status: str | None, limit: int, offset: int) -> MemoryPage:
    params = {"status": status, "limit": limit + 1, "offset": offset}
    return MemoryPage(src.rows("memory_proposals", params, max_rows=limit + 1), src.rows("memory_items"))


@dataclass
class ProposalDetail:
    proposal: dict[str, Any]
    reviews: list[dict[str, Any]]


def proposal_detail(src: Source, proposal_id: str) -> ProposalDetail | None:
    proposal = src.one("memory_proposal", {"proposal_id": proposal_id})
    if proposal is None:
        return None
    return ProposalDetail(proposal, record_reviews(src, [proposal_id]))
