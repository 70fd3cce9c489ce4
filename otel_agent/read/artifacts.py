"""Artifacts: the list, one artifact with its versions and reviews, the CLI's table, and what the exports read
(an artifact version resolved by id or number, the lineage of its claims, a run's evidence bundle sections).
Reads docs/views-evidence.md: ``artifacts``, ``artifact_versions``, ``claim_lineage``, ``claim_support``,
``sources``, ``evidence_items``, ``claims``, ``citations``, ``conflicts``, ``reviews``, ``memory_proposals``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from otel_agent.errors import NotFoundError
from otel_agent.read.evidence import record_reviews
from otel_agent.read.source import Source, Table, json_rows


def artifacts_page(src: Source, text: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
    """One page of artifacts (``limit`` + 1 rows: one more when more exist)."""
    return src.rows("artifacts_list", {"text": text, "limit": limit + 1, "offset": offset}, max_rows=limit + 1)


@dataclass
class ArtifactDetail:
    """An artifact's row, its ``versions`` (oldest first, with content) and the reviews of its versions."""

    artifact: dict[str, Any]
    versions: list[dict[str, Any]]
    reviews: list[dict[str, Any]]


def artifact_detail(src: Source, artifact_id: str) -> ArtifactDetail | None:
    artifact = src.one("artifact_detail", {"artifact_id": artifact_id})
    if artifact is None:
        return None
    versions = src.rows("artifact_versions", {"artifact_id": artifact_id})
    return ArtifactDetail(artifact, versions, record_reviews(src, [v["version_id"] for v in versions]))


ARTIFACTS_SQL = """
SELECT artifact_id, name, type, status, versions, latest_version, latest_version_id, latest_approved_version,
       run_id, last_version_at
FROM artifacts
WHERE $run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR
ORDER BY last_version_at DESC NULLS LAST, artifact_id
LIMIT $limit
"""


def artifacts_table(src: Source, run_id: str | None, limit: int, max_rows: int) -> Table:
    return src.table(ARTIFACTS_SQL, {"run_id": run_id, "limit": limit}, max_rows=max_rows)


def artifact_exists(src: Source, artifact_id: str) -> bool:
    sql = "SELECT 1 AS found FROM artifacts WHERE artifact_id = $artifact_id LIMIT 1"
    return src.one(sql, {"artifact_id": artifact_id}) is not None


def artifact_row(src: Source, artifact_id: str) -> dict[str, Any] | None:
    """The artifact as plain JSON values (the exports' form)."""
    return _one(src, "SELECT * FROM artifacts WHERE artifact_id = ?", [artifact_id], "artifact_id")


def _one(src: Source, sql: str, params: list[Any], order_by: str) -> dict[str, Any] | None:
    found = json_rows(src, sql, params, order_by=order_by, limit=1)
    return found[0] if found else None


def resolve_version(src: Source, ident: str, version: int | None = None) -> dict[str, Any]:
    """The artifact version named by a version id, or by an artifact id (+ optional version number; default
    the latest approved version, else the latest), as plain JSON values."""
    by_id = "SELECT * FROM artifact_versions WHERE version_id = ?"
    row = _one(src, by_id, [ident], "version_id")
    if row is not None:
        if version is not None and row["version"] != version:
            raise NotFoundError(f"{ident} is version {row['version']} of {row['artifact_id']}, not version {version}")
        return row
    artifact = artifact_row(src, ident)
    if artifact is None:
        raise NotFoundError(f"no artifact or artifact version with id {ident!r}")
    if version is not None:
        sql = "SELECT * FROM artifact_versions WHERE artifact_id = ? AND version = ?"
        row = _one(src, sql, [ident, version], "version_id")
        if row is None:
            raise NotFoundError(f"artifact {ident} has no version {version} (it has {artifact['versions']})")
        return row
    chosen = artifact["latest_approved_version_id"] or artifact["latest_version_id"]
    if chosen is None:
        raise NotFoundError(f"artifact {ident} has no version")
    row = _one(src, by_id, [chosen], "version_id")
    if row is None:
        raise NotFoundError(f"artifact {ident}'s version {chosen} is not stored")
    return row


VERSION_LINEAGE_SQL = """
SELECT l.*, cs.why AS claim_why
FROM claim_lineage l JOIN claim_support cs USING (claim_id)
WHERE l.artifact_version_id = ?
"""


def version_lineage(src: Source, version_id: str) -> list[dict[str, Any]]:
    """Every lineage path of the claims bound to an artifact version, with each claim's why."""
    return json_rows(src, VERSION_LINEAGE_SQL, [version_id], order_by="claim_id, citation_id NULLS FIRST")


# The evidence bundle of a run (export/bundle.py): what belongs to a run, then one query per section.
def _ts(column: str) -> str:
    """A naive-UTC TIMESTAMP[_NS] column as RFC 3339 text."""
    return f"strftime(CAST({column} AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%fZ')"


def _tstz(column: str) -> str:
    """A TIMESTAMPTZ column as RFC 3339 UTC text."""
    return f"strftime(timezone('UTC', {column}), '%Y-%m-%dT%H:%M:%S.%fZ')"


SCOPE = """
WITH run_claims AS (
    SELECT claim_id FROM claims WHERE run_id = $1
),
bundle_citations AS (
    SELECT citation_id, evidence_id FROM citations
    WHERE run_id = $1 OR claim_id IN (SELECT claim_id FROM run_claims)
),
bundle_evidence AS (
    SELECT evidence_id FROM evidence_items WHERE run_id = $1
    UNION SELECT evidence_id FROM bundle_citations
    UNION SELECT unnest(evidence_ids) FROM artifact_versions WHERE run_id = $1
),
bundle_sources AS (
    SELECT source_id FROM sources WHERE run_id = $1
    UNION SELECT source_id FROM evidence_items WHERE evidence_id IN (SELECT evidence_id FROM bundle_evidence)
),
bundle_conflicts AS (
    SELECT conflict_id FROM conflicts
    WHERE run_id = $1
       OR len(list_intersect(claim_ids, (SELECT coalesce(list(claim_id), []) FROM run_claims))) > 0
       OR len(list_intersect(evidence_ids, (SELECT coalesce(list(evidence_id), []) FROM bundle_evidence))) > 0
)
"""

SECTIONS: dict[str, str] = {
    "sources": f"""
        SELECT source_id AS "id", url, title, provider, {_ts("retrieved_at")} AS "retrievedAt", metadata,
               origin, run_id AS "runId", step_id AS "stepRunId"
        FROM sources WHERE source_id IN (SELECT source_id FROM bundle_sources)""",
    "evidence": f"""
        SELECT evidence_id AS "id", run_id AS "runId", step_id AS "stepRunId", source_id AS "sourceId", excerpt,
               confidence, score, supports_step AS "supportsStep", metadata, origin, status,
               reviewed_by AS "reviewedBy", {_tstz("reviewed_at")} AS "reviewedAt",
               {_ts("recorded_at")} AS "recordedAt", trace_id AS "traceId", span_id AS "spanId"
        FROM evidence_items WHERE evidence_id IN (SELECT evidence_id FROM bundle_evidence)""",
    "claims": f"""
        SELECT c.claim_id AS "id", c.run_id AS "runId", c.step_id AS "stepRunId",
               c.artifact_version_id AS "artifactVersionId", c.text, c.confidence, s.status,
               s.why AS "statusReason", {_ts("c.recorded_at")} AS "recordedAt",
               c.trace_id AS "traceId", c.span_id AS "spanId"
        FROM claims c JOIN claim_support s USING (claim_id)
        WHERE c.claim_id IN (SELECT claim_id FROM run_claims)""",
    "citations": f"""
        SELECT citation_id AS "id", claim_id AS "claimId", evidence_id AS "evidenceItemId",
               citation_text AS "citationText", status, run_id AS "runId", {_ts("recorded_at")} AS "recordedAt"
        FROM citations WHERE citation_id IN (SELECT citation_id FROM bundle_citations)""",
    "conflicts": f"""
        SELECT conflict_id AS "id", claim_ids AS "claimIds", evidence_ids AS "evidenceItemIds", description,
               severity, status, status_by AS "statusBy", {_tstz("status_at")} AS "statusAt", run_id AS "runId",
               {_ts("recorded_at")} AS "recordedAt"
        FROM conflicts WHERE conflict_id IN (SELECT conflict_id FROM bundle_conflicts)""",
    "reviews": f"""
        SELECT review_id AS "id", target_kind AS "targetKind", target_id AS "targetId", decision, reviewer,
               reason, {_tstz("reviewed_at")} AS "timestamp", principal, target_snapshot AS "original"
        FROM reviews
        WHERE (target_kind = 'claim' AND target_id IN (SELECT claim_id FROM run_claims))
           OR (target_kind = 'evidence_item' AND target_id IN (SELECT evidence_id FROM bundle_evidence))
           OR (target_kind = 'conflict' AND target_id IN (SELECT conflict_id FROM bundle_conflicts))
           OR (target_kind = 'artifact_version'
               AND target_id IN (SELECT version_id FROM artifact_versions WHERE run_id = $1))
           OR (target_kind = 'memory_proposal'
               AND target_id IN (SELECT proposal_id FROM memory_proposals WHERE run_id = $1))""",
    "artifacts": f"""
        SELECT a.artifact_id AS "id", a.type, a.name, a.status, a.versions AS "versionCount",
               a.latest_version_id AS "latestVersionId", a.latest_approved_version_id AS "latestApprovedVersionId",
               (SELECT list({{'id': v.version_id, 'version': v.version, 'status': v.status, 'isLatest': v.is_latest,
                             'sourceStepRunId': v.source_step_id, 'evidenceRefs': v.evidence_ids,
                             'contentSha256': v.content_sha256, 'createdAt': {_ts("v.created_at")},
                             'content': v.content}} ORDER BY v.version)
                FROM artifact_versions v WHERE v.artifact_id = a.artifact_id) AS "versions"
        FROM artifacts a WHERE a.run_id = $1""",
}
ORDER = {"reviews": '"timestamp", "id"'}


def evidence_bundle(src: Source, run_id: str) -> dict[str, Any]:
    """The JSON evidence bundle of a run: ``runId``, ``sources``, ``evidence``, ``claims``, ``citations``,
    ``conflicts``, ``reviews`` and ``artifacts`` with their versions.

    What belongs to a run: its claims; the citations it recorded or that cite its claims; the evidence it
    recorded, cites or lists in its artifact versions (wherever that evidence was recorded); the sources it
    recorded or its evidence comes from; the conflicts it recorded or that name its claims or evidence; every
    review of those records, of its artifact versions and of its memory proposals. Lists are sorted by id;
    times are RFC 3339 UTC. ``NotFoundError`` when the run has no evidence records, claims or artifacts."""
    bundle: dict[str, Any] = {"runId": run_id}
    for name, sql in SECTIONS.items():
        bundle[name] = json_rows(src, SCOPE + sql, [run_id], order_by=ORDER.get(name, '"id"'))
    if not any(bundle[name] for name in SECTIONS if name != "reviews"):
        raise NotFoundError(f"no evidence records, claims or artifacts for run {run_id!r}")
    return bundle
