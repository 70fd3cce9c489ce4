"""Span annotations sent outside spans, as Arize Phoenix's clients send them: ``POST /v1/span_annotations``.

OpenInference instrumentations send spans over OTLP; feedback and evaluations added later — a user's thumbs-down,
an LLM judge's score, a code check — go to Phoenix's REST API instead (``phoenix.client``'s
``spans.add_span_annotation`` / ``log_span_annotations``, the JS client's ``addSpanAnnotation``), as JSON:
``{"data": [{"span_id", "name", "annotator_kind", "result": {"label", "score", "explanation"}, "metadata",
"identifier"}]}``. The receiver takes that body at the same path, so such a client pointed at it (its base URL,
a bearer token of the ``ingest`` role as its API key) records the feedback here.

Each annotation is stored as what the GenAI conventions call the same fact: a ``gen_ai.evaluation.result`` log
record (event name) with ``gen_ai.evaluation.name`` / ``.score.value`` / ``.score.label`` / ``.explanation``,
the annotated span's id as its span context (Phoenix names no trace: the ``evaluations`` view finds the span by its
id), the annotation exactly as sent as its body (lossless), and ``phoenix.annotation.*`` attributes for what the
conventions have no name for (annotator kind, identifier, metadata). It then takes the ordinary path of an OTLP
logs request (admission, redaction, the writer, acknowledgement after COMMIT). Phoenix's rule that an annotation
with the same span, name and identifier replaces the earlier one is the view's (docs/views-runs.md, "Evaluations").

Telemetry is hostile input: the body is bounded by the receiver's request limit, at most ``MAX_ANNOTATIONS``
annotations a request, every text cut to ``MAX_TEXT`` characters, a span id must be 16 hex digits; anything else is
one ``InvalidPayloadError`` (HTTP 400) naming the first bad annotation.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from otel_agent.errors import InvalidPayloadError

PATH = "/v1/span_annotations"
EVENT_NAME = "gen_ai.evaluation.result"
SCOPE = "phoenix.span_annotations"
"""The instrumentation scope of the stored records: where they came from."""
MAX_ANNOTATIONS = 1000
MAX_TEXT = 8192
SPAN_ID = re.compile(r"^[0-9a-fA-F]{16}$")


def _text(value: Any, what: str, index: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidPayloadError(f"span annotation {index}: {what} must be a string")
    return value[:MAX_TEXT]


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def annotation_id(span_id: str, name: str, identifier: str | None) -> str:
    """The id answered for an annotation: the same for the same span, name and identifier (the annotation it
    replaces), as Phoenix's upsert key."""
    return hashlib.sha256(f"{span_id}\0{name}\0{identifier or ''}".encode()).hexdigest()[:24]


def log_record(item: Any, index: int, now_ns: int) -> tuple[dict[str, Any], str]:
    """One annotation as an OTLP/JSON log record, and its id."""
    if not isinstance(item, dict):
        raise InvalidPayloadError(f"span annotation {index}: not an object")
    span_id = item.get("span_id")
    if not isinstance(span_id, str) or not SPAN_ID.match(span_id):
        raise InvalidPayloadError(f"span annotation {index}: span_id must be 16 hex digits")
    name = _text(item.get("name"), "name", index)
    if not name:
        raise InvalidPayloadError(f"span annotation {index}: name is required")
    result = item.get("result") or {}
    if not isinstance(result, dict):
        raise InvalidPayloadError(f"span annotation {index}: result must be an object")
    label = _text(result.get("label"), "result.label", index)
    explanation = _text(result.get("explanation"), "result.explanation", index)
    score = result.get("score")
    numeric = isinstance(score, int | float) and not isinstance(score, bool)
    if score is not None and not (numeric and math.isfinite(score)):
        raise InvalidPayloadError(f"span annotation {index}: result.score must be a finite number")
    if label is None and explanation is None and score is None:
        raise InvalidPayloadError(f"span annotation {index}: result needs a label, a score or an explanation")
    kind = _text(item.get("annotator_kind"), "annotator_kind", index) or "HUMAN"
    identifier = _text(item.get("identifier"), "identifier", index)
    metadata = item.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidPayloadError(f"span annotation {index}: metadata must be an object")
    attributes = [_kv("gen_ai.evaluation.name", name), _kv("phoenix.annotation.annotator_kind", kind[:32])]
    if score is not None:
        attributes.append(_kv("gen_ai.evaluation.score.value", float(score)))
    if label is not None:
        attributes.append(_kv("gen_ai.evaluation.score.label", label))
    if explanation is not None:
        attributes.append(_kv("gen_ai.evaluation.explanation", explanation))
    if identifier:
        attributes.append(_kv("phoenix.annotation.identifier", identifier))
    if metadata:
        attributes.append(_kv("phoenix.annotation.metadata", json.dumps(metadata, sort_keys=True)[:MAX_TEXT]))
    record = {
        "timeUnixNano": str(now_ns),
        "observedTimeUnixNano": str(now_ns),
        "severityNumber": 9,
        "severityText": "INFO",
        "eventName": EVENT_NAME,
        "spanId": span_id.lower(),
        "body": {"stringValue": json.dumps(item, sort_keys=True)[: 4 * MAX_TEXT]},
        "attributes": attributes,
    }
    return record, annotation_id(span_id.lower(), name, identifier)


def to_otlp_logs(body: bytes, now_ns: int) -> tuple[bytes, list[str]]:
    """Phoenix's ``{"data": [annotation, …]}`` as an OTLP/JSON logs request, and each annotation's id."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidPayloadError(f"span annotations: not JSON ({exc})") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list) or not data:
        raise InvalidPayloadError('span annotations: the body is {"data": [annotation, …]}, at least one')
    if len(data) > MAX_ANNOTATIONS:
        raise InvalidPayloadError(f"span annotations: at most {MAX_ANNOTATIONS} a request, not {len(data)}")
    records, ids = [], []
    for index, item in enumerate(data):
        record, rid = log_record(item, index, now_ns)
        records.append(record)
        ids.append(rid)
    request = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {"name": SCOPE}, "logRecords": records}]}]}
    return json.dumps(request).encode(), ids
