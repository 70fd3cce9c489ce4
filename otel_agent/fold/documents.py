"""The ``parsed_retrieval_documents`` rows of a retrieval span of another convention, read at fold time.

The rule is the SQL of store/views/evidence/003_retrieval_documents.sql (``retrieval_documents_in``), written
again in Python under the same names (``retrieval_documents_in``, ``retrieval_document_indexes``,
``retrieval_document_at``, ``retrieval_metadata``, ``retrieval_provider``, ``genai_retrieval_documents``),
because the SQL, run by the writer for each commit that holds a retrieval span, cost ~14 ms of the writer's one
thread per commit (planning plus JSON functions), which halves what it can store when every batch has one
(measured in the 2026-11-30 note). Here it runs in the decode workers. The SQL stays the reference: it fills old
stores and the re-delivery path, and a test checks that both give the same rows, document for document, on
every form (tests/derived_evidence/test_lineage_keys.py).

Document n of a span's attributes is read from the first of these forms that has it: OpenInference flattened
keys ``retrieval.documents.<n>.document.id|content|score|metadata``; OpenInference ``retrieval.documents`` as an
array of objects keyed ``document.*``; GenAI ``gen_ai.retrieval.documents``, an array of objects (or the JSON
text of one) keyed id, content or text, score, metadata, url, title.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pyarrow as pa

from otel_agent.fold.common import json_text
from otel_agent.fold.promoted import RUN_ID_KEY, as_text

PARSED_DOCUMENTS_SCHEMA = pa.schema(
    [
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("end_time", pa.timestamp("ns")),
        pa.field("doc_index", pa.int32()),
        pa.field("origin", pa.string()),
        pa.field("document_id", pa.string()),
        pa.field("content", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("metadata", pa.string()),
        pa.field("url", pa.string()),
        pa.field("title", pa.string()),
        pa.field("provider", pa.string()),
        pa.field("run_id", pa.string()),
        pa.field("step_id", pa.string()),
        pa.field("service_name", pa.string()),
    ]
)

# [0-9], not \d: Python's \d matches every Unicode digit, RE2's (the SQL's) only ASCII ones
_FLAT_KEY = re.compile(r"retrieval\.documents\.([0-9]+)\.document\.(?:id|content|score|metadata)")
_FLAT_FIELDS = ("id", "content", "score", "metadata")
_INT32_MAX = 2**31 - 1
_PROVIDER_KEYS = ("gen_ai.data_source.id", "gen_ai.provider.name", "db.system.name", "db.system")
STEP_ID_KEY = "otel_agent.step.id"


_INVALID = object()


_ORJSON_MAX_DEPTH = 255  # orjson reads 1024 levels but writes only 255 (a TypeError beyond)


def _json_text(text: str) -> Any:
    """The value a JSON text holds, or ``_INVALID`` when it is not valid JSON — or is nested deeper than orjson
    writes back, which the fields read from it would need (there SQL would read it: hostile input only)."""
    try:
        value = orjson.loads(text)
        if text.count("[") + text.count("{") > _ORJSON_MAX_DEPTH:  # only then can it be that deep
            orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _INVALID
    return value


def genai_retrieval_documents(attributes: dict[str, Any]) -> Any:
    """SQL ``genai_retrieval_documents``: the GenAI documents array, given as an array or as its JSON text."""
    value = attributes.get("gen_ai.retrieval.documents")
    if isinstance(value, str):
        value = _json_text(value)
    return value if isinstance(value, list) else None


def retrieval_document_indexes(attributes: dict[str, Any]) -> list[int]:
    """SQL ``retrieval_document_indexes``: every n some form may have a document at."""
    found: set[int] = set()
    for key in attributes:
        match = _FLAT_KEY.fullmatch(key)
        if match:
            # TRY_CAST(... AS INTEGER): leading zeros are fine, more than an INTEGER is NULL (and int() refuses
            # a string of over 4300 digits, so the length is checked first)
            digits = match.group(1).lstrip("0") or "0"
            if len(digits) <= 10 and int(digits) <= _INT32_MAX:
                found.add(int(digits))
    for documents in (attributes.get("retrieval.documents"), genai_retrieval_documents(attributes)):
        if isinstance(documents, list):
            found.update(range(len(documents)))
    return sorted(found)


def retrieval_metadata(value: Any) -> tuple[str | None, Any]:
    """SQL ``retrieval_metadata``: (its JSON text, its value) for an object or for text. Whether text is JSON at
    all is left to DuckDB (documents_insert_all.sql keeps it only if ``json_valid``): DuckDB accepts a little more
    than orjson (trailing commas, 1e400), so for such text the fold keeps it as SQL does but finds no url or
    title in it, where SQL would."""
    if isinstance(value, dict):
        return json_text(value).decode(), value  # as the attributes JSON holds it
    if isinstance(value, str):
        parsed = _json_text(value)
        return value, None if parsed is _INVALID else parsed
    return None, None


def _text(container: Any, key: str) -> str | None:
    """``json_extract_string(container, key)``: a string as it is, another value as its JSON text."""
    return as_text(container.get(key)) if isinstance(container, dict) else None


def _first(*values: str | None) -> str | None:
    """SQL ``coalesce``."""
    return next((v for v in values if v is not None), None)


def _double(text: str | None) -> float | None:
    """``TRY_CAST(text AS DOUBLE)``."""
    if text is None or "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def retrieval_document_at(attributes: dict[str, Any], n: int) -> dict[str, Any] | None:
    """SQL ``retrieval_document_at``: document n's fields, or None when no form has one."""
    flat = {f: attributes.get(f"retrieval.documents.{n}.document.{f}") for f in _FLAT_FIELDS}
    if any(v is not None for v in flat.values()):
        raw_metadata = flat.pop("metadata")
        origin, doc, prefix = "openinference", flat, ""  # as SQL builds it: id, content, score
    else:
        oi = attributes.get("retrieval.documents")
        genai = genai_retrieval_documents(attributes)
        if isinstance(oi, list) and n < len(oi) and isinstance(oi[n], dict):
            origin, doc, prefix = "openinference", oi[n], "document."
        elif genai is not None and n < len(genai) and isinstance(genai[n], dict):
            origin, doc, prefix = "gen_ai", genai[n], ""
        else:
            return None
        raw_metadata = doc.get(prefix + "metadata")
    metadata_text, metadata = retrieval_metadata(raw_metadata)
    return {
        "origin": origin,
        "document_id": _text(doc, prefix + "id"),
        "content": _first(_text(doc, prefix + "content"), _text(doc, prefix + "text")),
        "score": _double(_text(doc, prefix + "score")),
        "metadata": metadata_text,
        "url": _first(
            _text(doc, "url"), _text(metadata, "url"), _text(metadata, "source"), _text(metadata, "file_path")
        ),
        "title": _first(_text(doc, "title"), _text(metadata, "title")),
    }


def retrieval_provider(attributes: dict[str, Any]) -> str | None:
    """SQL ``retrieval_provider``: who served a retrieval span's documents."""
    for key in _PROVIDER_KEYS:
        value = as_text(attributes.get(key))
        if value is not None:
            return value
    return None


def retrieval_documents_in(
    trace_id: str, span_id: str, end_time: int, attributes: dict[str, Any], service_name: str | None
) -> list[dict[str, Any]]:
    """SQL ``retrieval_documents_in`` for one retrieval span: its ``parsed_retrieval_documents`` rows, column →
    value (``PARSED_DOCUMENTS_SCHEMA``), one per document (its redacted attribute dict)."""
    indexes = retrieval_document_indexes(attributes)
    if not indexes:
        return []
    span_values = {
        "trace_id": trace_id,
        "span_id": span_id,
        "end_time": end_time,
        "provider": retrieval_provider(attributes),
        "run_id": as_text(attributes.get(RUN_ID_KEY)),
        "step_id": as_text(attributes.get(STEP_ID_KEY)),
        "service_name": service_name,
    }
    rows = []
    for n in indexes:
        document = retrieval_document_at(attributes, n)
        if document is not None:
            rows.append({**span_values, "doc_index": n, **document})
    return rows
