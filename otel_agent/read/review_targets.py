"""What can be reviewed, and how: the one table of review target kinds and the decisions each accepts.

The ReviewService validates against it and the CLI builds ``otel-agent review``'s usage from it, so the
usage line offers exactly what is accepted. A module of its own, without DuckDB, because every ``otel-agent``
start imports the CLI (see cli/main.py).
"""

from __future__ import annotations

from otel_agent.errors import InvalidPayloadError

# canonical kind → (view holding the record, its id column)
TARGETS: dict[str, tuple[str, str]] = {
    "evidence_item": ("evidence_items", "evidence_id"),
    "claim": ("claim_support", "claim_id"),
    "artifact_version": ("artifact_versions", "version_id"),
    "memory_proposal": ("memory_proposals", "proposal_id"),
    "conflict": ("conflicts", "conflict_id"),
    "decision": ("decisions", "decision_id"),
}
KIND_ALIASES = {
    "evidence": "evidence_item",
    "evidence_item": "evidence_item",
    "claim": "claim",
    "artifact_version": "artifact_version",
    "version": "artifact_version",
    "memory_proposal": "memory_proposal",
    "memory": "memory_proposal",
    "conflict": "conflict",
    "decision": "decision",
}
RECORD_DECISIONS = ("approve", "reject", "annotate")
CONFLICT_DECISIONS = ("acknowledge", "resolve", "annotate")

# Verdicts some records accept only in a given state: kind → (column of its view, required value, the verdicts
# it governs, why). A decision record is answered by a human only when its effective decision asked for one
# (seed 001: the policy gate's human_review); anyone may annotate any decision.
VERDICT_REQUIRES: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "decision": (
        "effective_decision",
        "human_review",
        ("approve", "reject"),
        "only a decision whose effective decision is human_review takes a human verdict",
    ),
}


def canonical_kind(kind: str) -> str:
    """The kind's name in ``TARGETS`` for a name or alias (any case, ``-`` or ``_``); raises for unknown kinds."""
    canonical = KIND_ALIASES.get((kind or "").strip().lower().replace("-", "_"))
    if canonical is None:
        raise InvalidPayloadError(f"unknown review target kind {kind!r}; one of {sorted(TARGETS)}")
    return canonical


def decisions_for(kind: str) -> tuple[str, ...]:
    """The decisions a review of ``kind`` may take."""
    return CONFLICT_DECISIONS if kind == "conflict" else RECORD_DECISIONS


def all_decisions() -> tuple[str, ...]:
    """Every decision some kind accepts, in table order."""
    return tuple(dict.fromkeys((*RECORD_DECISIONS, *CONFLICT_DECISIONS)))


def kinds_accepting(decision: str) -> tuple[str, ...]:
    """The kind names (aliases included) whose records accept ``decision``."""
    return tuple(alias for alias, kind in KIND_ALIASES.items() if decision in decisions_for(kind))
