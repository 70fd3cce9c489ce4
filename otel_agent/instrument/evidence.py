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
from ._scope import base_attributes, current_scope, emit_record, put
from ._tracer import current_tracer
from .errors import InvalidValueError

CONFIDENCES = ("high", "medium", "low")
CITATION_STATUSES = ("valid", "invalid", "weak")
SEVERITIES = ("low", "medium", "high")


def one_of(value: object, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise InvalidValueError(f"{what} must be one of {list(allowed)}, got {value!r}")
    return value  # type: ignore[return-value]


def text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidValueError(f"{what} must be a non-empty string")
    return value


def iso_time(value: datetime | str | None) -> str:
    if value is None:
        return datetime.now(UTC).isoformat(timespec="milliseconds")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat(timespec="milliseconds")
    return text(value, "timestamp")


def metadata_json(value: Mapping[str, Any] | None) -> str | None:
    if value is None:
        return None
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


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
    sid = id_or_new(source_id, "src", "source_id")
    text(url, "url")
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_SOURCE)
        attrs[A.SOURCE_ID] = sid
        attrs[A.SOURCE_URL] = url
        put(attrs, A.SOURCE_TITLE, title)
        put(attrs, A.SOURCE_PROVIDER, provider)
        attrs[A.SOURCE_RETRIEVED_AT] = iso_time(retrieved_at)
        put(attrs, A.SOURCE_METADATA, metadata_json(metadata))
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
) -> str:
    """An excerpt of a source supporting a step (defaults to the current step's name). Returns its id."""
    eid = id_or_new(evidence_id, "ev", "evidence_id")
    check_id(source_id, "source_id")
    text(excerpt, "excerpt")
    one_of(confidence, CONFIDENCES, "confidence")
    tracer = current_tracer()
    if tracer is not None:
        scope = current_scope()
        attrs = base_attributes(scope, A.KIND_EVIDENCE)
        attrs[A.EVIDENCE_ID] = eid
        attrs[A.EVIDENCE_SOURCE_ID] = source_id
        attrs[A.EVIDENCE_EXCERPT] = excerpt
        attrs[A.EVIDENCE_CONFIDENCE] = confidence
        put(attrs, A.EVIDENCE_SUPPORTS_STEP, supports_step if supports_step is not None else scope.step_name)
        put(attrs, A.EVIDENCE_METADATA, metadata_json(metadata))
        emit_record("otel_agent.evidence_item", attrs, tracer=tracer)
    return eid


def claim(
    claim_text: str,
    *,
    confidence: str,
    artifact_version_id: str | None = None,
    claim_id: str | None = None,
) -> str:
    """A conclusion in an output, optionally bound to the artifact version it appears in. Returns its id."""
    cid = id_or_new(claim_id, "claim", "claim_id")
    text(claim_text, "claim text")
    one_of(confidence, CONFIDENCES, "confidence")
    if artifact_version_id is not None:
        check_id(artifact_version_id, "artifact_version_id")
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CLAIM)
        attrs[A.CLAIM_ID] = cid
        attrs[A.CLAIM_TEXT] = claim_text
        attrs[A.CLAIM_CONFIDENCE] = confidence
        put(attrs, A.CLAIM_ARTIFACT_VERSION_ID, artifact_version_id)
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
    cit = id_or_new(citation_id, "cit", "citation_id")
    check_id(claim_id, "claim_id")
    check_id(evidence_id, "evidence_id")
    one_of(status, CITATION_STATUSES, "citation status")
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CITATION)
        attrs[A.CITATION_ID] = cit
        attrs[A.CITATION_CLAIM_ID] = claim_id
        attrs[A.CITATION_EVIDENCE_ID] = evidence_id
        put(attrs, A.CITATION_TEXT, citation_text)
        attrs[A.CITATION_STATUS] = status
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
    xid = id_or_new(conflict_id, "conflict", "conflict_id")
    text(description, "conflict description")
    claims = check_ids(claim_ids, "claim_ids")
    evidence = check_ids(evidence_ids, "evidence_ids")
    if not claims and not evidence:
        raise InvalidValueError("a conflict needs at least one claim id or evidence id")
    one_of(severity, SEVERITIES, "severity")
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_CONFLICT)
        attrs[A.CONFLICT_ID] = xid
        put(attrs, A.CONFLICT_CLAIM_IDS, claims)
        put(attrs, A.CONFLICT_EVIDENCE_IDS, evidence)
        attrs[A.CONFLICT_DESCRIPTION] = description
        attrs[A.CONFLICT_SEVERITY] = severity
        emit_record("otel_agent.conflict", attrs, tracer=tracer)
    return xid
