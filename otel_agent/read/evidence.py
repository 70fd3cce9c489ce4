"""Evidence and lineage: claims with their support status, a claim's lineage (claim → citations → evidence →
sources) with conflicts and reviews, and the decision path's tables (call dependencies, repairs, candidate
history). Reads docs/views-evidence.md: ``claim_support``, ``claim_lineage_of``, ``conflicts``, ``reviews``,
``call_dependencies``, ``repairs``, ``candidate_history``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from otel_agent.read.source import Source, Table

CLAIM_STATUSES = ("supported", "unverified", "conflicted", "rejected")


def claims_page(
    src: Source, *, status: str | None, text: str | None, run_id: str | None, limit: int, offset: int
) -> list[dict[str, Any]]:
    """One page of claims (``limit`` + 1 rows: one more when more exist)."""
    params = {"status": status, "text": text, "run_id": run_id, "limit": limit + 1, "offset": offset}
    return src.rows("claims_list", params, max_rows=limit + 1)


def claim_counts(src: Source) -> dict[str, int]:
    return {r["status"]: r["n"] for r in src.rows("claims_counts")}


def record_reviews(src: Source, ids: list[str]) -> list[dict[str, Any]]:
    """The review history of a set of records (any kind), newest first, with the preserved originals."""
    return src.rows("record_reviews", {"ids": ids}) if ids else []


@dataclass
class Lineage:
    """A claim's lineage grouped: its citations, distinct evidence items and sources (rows of ``claim_lineage``)."""

    claim: dict[str, Any]
    paths: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    sources: list[dict[str, Any]]


def group_lineage(paths: list[dict[str, Any]]) -> Lineage:
    citations: dict[str, dict[str, Any]] = {}
    evidence: dict[str, dict[str, Any]] = {}
    sources: dict[str, dict[str, Any]] = {}
    for r in paths:
        if r.get("citation_id"):
            citations[r["citation_id"]] = r
        if r.get("evidence_id"):
            evidence.setdefault(r["evidence_id"], r)
        if r.get("source_id"):
            sources.setdefault(r["source_id"], r)
    return Lineage(paths[0], paths, list(citations.values()), list(evidence.values()), list(sources.values()))


@dataclass
class ClaimDetail:
    """A claim's page: its ``lineage``, the ``conflicts`` naming it or its evidence, and every ``reviews`` row."""

    lineage: Lineage
    conflicts: list[dict[str, Any]]
    reviews: list[dict[str, Any]]


def claim_detail(src: Source, claim_id: str) -> ClaimDetail | None:
    paths = src.rows("claim_lineage", {"claim_id": claim_id})
    if not paths:
        return None
    evidence_ids = sorted({p["evidence_id"] for p in paths if p.get("evidence_id")})
    named = src.one("claim_conflict_keys", {"ids": [claim_id, *evidence_ids]})
    conflicts = (
        src.rows("claim_conflicts", {"claim_id": claim_id, "evidence_ids": evidence_ids})
        if named and named["n"]
        else []
    )
    ids = [claim_id, *evidence_ids, *(c["conflict_id"] for c in conflicts)]
    return ClaimDetail(group_lineage(paths), conflicts, record_reviews(src, ids))


CLAIMS_SQL = """
SELECT claim_id, status, why, citations, valid_citations, supporting_evidence, text, run_id, artifact_version_id
FROM claim_support
WHERE ($run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR)
  AND ($status::VARCHAR IS NULL OR status = $status::VARCHAR)
ORDER BY run_id, claim_id
LIMIT $limit
"""


def claims_table(src: Source, run_id: str | None, status: str | None, limit: int, max_rows: int) -> Table:
    return src.table(CLAIMS_SQL, {"run_id": run_id, "status": status, "limit": limit}, max_rows=max_rows)


# The whole excerpt: a face that shows a table cuts long text itself.
LINEAGE_SQL = """
SELECT claim_id, claim_status, citation_id, citation_status, evidence_id, evidence_status, supports,
       excerpt, source_id, source_url, source_provider, source_retrieved_at
FROM claim_lineage_of($claim_id) ORDER BY citation_id NULLS FIRST, evidence_id
"""


def lineage_table(src: Source, claim_id: str, max_rows: int) -> Table:
    """Claim → citation → evidence item → source, one row per path, with statuses."""
    return src.table(LINEAGE_SQL, {"claim_id": claim_id}, max_rows=max_rows)


DEPENDENCIES_SQL = """
SELECT run_id, step_name, iteration, agent_name, call_kind, subject, prompt_name, prompt_version, direction, ref,
       artifact_id, artifact_version
FROM call_dependencies
WHERE ($run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR)
  AND ($of::VARCHAR IS NULL OR step_name = $of::VARCHAR OR prompt_name = $of::VARCHAR OR agent_name = $of::VARCHAR)
  AND ($iteration::BIGINT IS NULL OR iteration = $iteration::BIGINT)
ORDER BY run_id, start_time, span_id, direction, position
LIMIT $limit
"""


def dependencies_table(
    src: Source, run_id: str | None, of: str | None, iteration: int | None, limit: int, max_rows: int
) -> Table:
    params = {"run_id": run_id, "of": of, "iteration": iteration, "limit": limit}
    return src.table(DEPENDENCIES_SQL, params, max_rows=max_rows)


REPAIRS_SQL = """
SELECT repair_id, iteration, action, applied, target, before, after, reason, computed_by, computed_by_name,
       from_version_id, to_version_id, run_id
FROM repairs
WHERE $run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR
ORDER BY run_id, iteration NULLS LAST, repaired_at, repair_id
LIMIT $limit
"""


def repairs_table(src: Source, run_id: str | None, limit: int, max_rows: int) -> Table:
    return src.table(REPAIRS_SQL, {"run_id": run_id, "limit": limit}, max_rows=max_rows)


CANDIDATES_SQL = """
SELECT version, iteration, version_id, produced_by_repair_id, evaluation, evaluation_score, evaluation_reason,
       repair_action, repair_applied, repair_before, repair_after, repair_computed_by, next_version_id
FROM candidate_history
WHERE artifact_id = $artifact_id
ORDER BY version
LIMIT $limit
"""


def candidates_table(src: Source, artifact_id: str, limit: int, max_rows: int) -> Table:
    return src.table(CANDIDATES_SQL, {"artifact_id": artifact_id, "limit": limit}, max_rows=max_rows)
