"""The public views and macros, and their columns as this store has them: what a reader may query
(docs/views-runs.md, docs/views-evidence.md; the raw tables of docs/schema.md). ``oa_*`` objects are internal and
never listed. tests/read checks this list against the documents' headings."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from otel_agent.read.source import Source, Table

RAW_TABLES = ("spans", "span_events", "span_links", "logs", "metric_points")
RUN_VIEWS = (
    "classified_spans", "runs", "steps", "skill_invocations", "provider_calls", "tool_invocations", "guard_results",
    "verifier_results", "run_metrics", "cost_breakdown", "provider_health", "proxy_requests", "proxy_fallbacks",
    "proxy_health", "skill_health", "tool_usage", "run_timeline", "span_refs", "run_spans", "memory_operations",
    "sessions", "evaluations", "call_content", "run_rollups", "data_quality",
)  # fmt: skip
EVIDENCE_VIEWS = (
    "sources", "evidence_items", "claims", "citations", "conflicts", "retrieval_documents", "claim_support",
    "claim_lineage", "action_bindings", "evidence_binding_mismatches", "artifact_versions", "artifacts", "reviews",
    "review_verdicts", "review_status", "dangling_references", "receipt_transitions", "receipt_attempts",
    "receipt_state", "recovery_transitions", "receipt_recoveries", "trusted_writers", "writer_trust",
    "context_snapshots", "context_allocations", "context_blocks", "context_compressions", "memory_proposals",
    "memory_items", "decisions", "badcases", "call_dependencies", "repairs", "candidate_history", "quality_metrics",
    "authorizations", "workflow_manifest", "business_timeline", "alert_events", "alert_deliveries",
)  # fmt: skip
PUBLIC = (*RUN_VIEWS, *EVIDENCE_VIEWS, *RAW_TABLES)
DOCS = {"runs": "docs/views-runs.md", "evidence": "docs/views-evidence.md", "raw": "docs/schema.md"}
SHIPPED_DOCS = "_docs"
"""Where an installed package holds those documents (otel_agent/_docs/, copied from docs/ by setup.py's build)."""


def document(path: str) -> str | None:
    """The text of one of ``DOCS``'s documents (``docs/views-runs.md``, …): the installed package's copy, or in a
    checkout the file under docs/; None when neither is there."""
    name = Path(path).name
    if name not in {Path(p).name for p in DOCS.values()}:
        return None
    shipped = resources.files("otel_agent") / SHIPPED_DOCS / name
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[2] / "docs" / name
    return checkout.read_text(encoding="utf-8") if checkout.is_file() else None


def columns(src: Source, name: str | None = None) -> Table:
    """(view, column, type) of every public view (or of ``name``), in column order."""
    sql = (
        "SELECT table_name AS view, column_name AS column, data_type AS type FROM duckdb_columns() "
        "WHERE table_name IN (SELECT unnest($names::VARCHAR[])) AND NOT internal "
        "QUALIFY row_number() OVER (PARTITION BY table_name, column_name ORDER BY database_name) = 1 "
        "ORDER BY list_position($names::VARCHAR[], table_name), column_index"
    )
    names = [name] if name in PUBLIC else list(PUBLIC) if name is None else []
    return src.table(sql, {"names": names}, max_rows=5000)
