"""Evidence records: sources, evidence items, claims, citations and conflicts.

Each call emits one zero-length INTERNAL span named ``otel_agent.<kind>`` (child of the current span, carrying
the run and step ids) and returns the record's id: the one passed in, or a generated one. Records refer to
each other only by id, so they may come from different steps, traces and processes and still join in SQL.

Excerpts and claim texts are always emitted: they are the record, explicitly handed over by the caller, not
incidental prompt content (``capture_content`` does not apply).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from . import attributes as A
from ._ids import check_id, check_ids, id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import one_of, text
from .binding import ActionBinding, put_binding
from .errors import InvalidValueError

CONFIDENCES = ("high", "medium", "low")
CITATION_STATUSES = ("valid", "invalid", "weak")
SEVERITIES = ("low", "medium", "high")


def iso_time(value: datetime | str | None, problems: Problems) -> str | None:
    if value is None:
        return datetime.now(UTC).isoformat(timespec="milliseconds")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat(timespec="milliseconds")
    return text(value, "timestamp", problems)


def metadata_json(value: Mapping[str, Any] | None, problems: Problems) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(dict(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError) as exc:  # not a mapping, circular, keys that are not strings
        report(InvalidValueError(f"metadata must be a JSON-serialisable mapping: {exc}"), problems)
        return None


def source(
    url: str,
    *,
    title: str | None = None,
    provider: str | None = None,
    retrieved_at: datetime | str | None = None,
    source_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> str:
    """A source document (url, title, provider such as ``tavily``, retrieval time). Returns its id."""
    problems: Problems = []
    sid = id_or_new(source_id, "src", "source_id", problems)
    url = text(url, "url", problems)  # type: ignore[assignment]
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_SOURCE)
        attrs[A.SOURCE_ID] = sid
        put(attrs, A.SOURCE_URL, url)
        put(attrs, A.SOURCE_TITLE, title)
        put(attrs, A.SOURCE_PROVIDER, provider)
        put(attrs, A.SOURCE_RETRIEVED_AT, iso_time(retrieved_at, problems))
        put(attrs, A.SOURCE_METADATA, metadata_json(metadata, problems))
        put_misuse(attrs, problems)
        emit_record("otel_agent.source", attrs, tracer=tracer)
    return sid


def evidence_item(
    source_id: str,
    excerpt: str,
    *,
    confidence: str,
    supports_step: str | None = None,
    evidence_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    action: ActionBinding | None = None,
) -> str:
    """An excerpt of a source supporting a step (defaults to the current step's name). ``action``: the action
    (run, config hash, variant) it was produced for. Returns its id."""
    problems: Problems = []
    eid = id_or_new(evidence_id, "ev", "evidence_id", problems)
    source_id = check_id(source_id, "source_id", problems)  # type: ignore[assignment]
    excerpt = text(excerpt, "excerpt", problems)  # type: ignore[assignment]
    confidence = one_of(confidence, CONFIDENCES, "confidence", problems)  # type: ignore[assignment]
    tracer = current_tracer()
    if tracer is not None:
        scope = current_scope()
        attrs = base_attributes(scope, A.KIND_EVIDENCE)
        attrs[A.EVIDENCE_ID] = eid
        put(attrs, A.EVIDENCE_SOURCE_ID, source_id)
        put(attrs, A.EVIDENCE_EXCERPT, excerpt)
        put(attrs, A.EVIDENCE_CONFIDENCE, confidence)
        put(attrs, A.EVIDENCE_SUPPORTS_STEP, supports_step if supports_step is not None else scope.step_name)
        put(attrs, A.EVIDENCE_METADATA, metadata_json(metadata, problems))
        put_binding(attrs, action, problems)
        put_misuse(attrs, problems)
        emit_record("otel_agent.evidence_item", attrs, tracer=tracer)
    return eid


def claim(
    claim_text: str,
    *,
    confidence: str,
    artifact_version_id: str | None = None,
    claim_id: str | None = None,
    action: ActionBinding | None = None,
) -> str:
    """A conclusion in an output, optionally bound to the artifact version it appears in. ``action``: the action
    it is about (evidence produced for another action does not support it). Returns its id."""
    problems: Problems = []
    cid = id_or_new(claim_id, "claim", "claim_id", problems)
    claim_text = text(claim_text, "claim text", problems)  # type: ignore[assignment]
    confidence = one_of(confidence, CONFIDENCES, "confidence", problems)  # type: ignore[assignment]
    if artifact_version_id is not None:
        artifact_version_id = check_id(artifact_version_id, "artifact_version_id", problems)
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CLAIM)
        attrs[A.CLAIM_ID] = cid
        put(attrs, A.CLAIM_TEXT, claim_text)
        put(attrs, A.CLAIM_CONFIDENCE, confidence)
        put(attrs, A.CLAIM_ARTIFACT_VERSION_ID, artifact_version_id)
        put_binding(attrs, action, problems)
        put_misuse(attrs, problems)
        emit_record("otel_agent.claim", attrs, tracer=tracer)
    return cid


def citation(
    claim_id: str,
    evidence_id: str,
    *,
    citation_text: str | None = None,
    status: str = "valid",
    citation_id: str | None = None,
) -> str:
    """A claim ↔ evidence link (``[1]``, ``(Smith 2024)``), status valid / invalid / weak. Returns its id."""
    problems: Problems = []
    cit = id_or_new(citation_id, "cit", "citation_id", problems)
    claim_id = check_id(claim_id, "claim_id", problems)  # type: ignore[assignment]
    evidence_id = check_id(evidence_id, "evidence_id", problems)  # type: ignore[assignment]
    status = one_of(status, CITATION_STATUSES, "citation status", problems)  # type: ignore[assignment]
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CITATION)
        attrs[A.CITATION_ID] = cit
        put(attrs, A.CITATION_CLAIM_ID, claim_id)
        put(attrs, A.CITATION_EVIDENCE_ID, evidence_id)
        put(attrs, A.CITATION_TEXT, citation_text)
        put(attrs, A.CITATION_STATUS, status)
        put_misuse(attrs, problems)
        emit_record("otel_agent.citation", attrs, tracer=tracer)
    return cit


def conflict(
    description: str,
    *,
    claim_ids: Sequence[str] = (),
    evidence_ids: Sequence[str] = (),
    severity: str = "medium",
    conflict_id: str | None = None,
) -> str:
    """Claims and/or evidence that contradict each other. Returns its id (status is derived from reviews)."""
    problems: Problems = []
    xid = id_or_new(conflict_id, "conflict", "conflict_id", problems)
    description = text(description, "conflict description", problems)  # type: ignore[assignment]
    claims = check_ids(claim_ids, "claim_ids", problems)
    evidence = check_ids(evidence_ids, "evidence_ids", problems)
    if not claims and not evidence:
        report(InvalidValueError("a conflict needs at least one claim id or evidence id"), problems, "recorded without")
    severity = one_of(severity, SEVERITIES, "severity", problems)  # type: ignore[assignment]
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CONFLICT)
        attrs[A.CONFLICT_ID] = xid
        put(attrs, A.CONFLICT_CLAIM_IDS, claims)
        put(attrs, A.CONFLICT_EVIDENCE_IDS, evidence)
        put(attrs, A.CONFLICT_DESCRIPTION, description)
        put(attrs, A.CONFLICT_SEVERITY, severity)
        put_misuse(attrs, problems)
        emit_record("otel_agent.conflict", attrs, tracer=tracer)
    return xid
