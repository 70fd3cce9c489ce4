"""The ``lineage_keys`` rows of our evidence records, computed at fold time (store/schema/060_lineage_keys.sql).

Done here rather than by SQL in the writer because the writer is one thread and DuckDB plans every statement
anew: running the SQL rule on each group commit cost ~10 ms of planning (bench measurement in the 2026-11-30
note), about as much as storing the spans themselves. The same rules in SQL, under the same names
(``lineage_key``, ``record_lineage_keys``, ``document_lineage_keys`` in store/views/evidence/005_lineage_keys.sql;
``lineage_keys_of`` is both), fill old stores and the re-delivery path, and a test checks that both give the
same rows for every span of the research scenario.

The rows of retrieval documents of other conventions come with the documents (fold/documents.py).
``is_retrieval_span_scope`` or ``is_retrieval_span_name`` together are the SQL macro ``is_retrieval_span`` (the
fold tests the scope once per scope, the name once per span); a test checks which spans' documents are read.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa

from otel_agent.fold.promoted import as_text

LINEAGE_KEYS_SCHEMA = pa.schema(
    [
        pa.field("key", pa.uint64()),
        pa.field("end_time", pa.timestamp("ns")),
        pa.field("next_key", pa.uint64()),
        pa.field("kind", pa.string()),
    ]
)
DOCUMENT_KIND = "retrieval"
"""``kind`` of the rows of retrieval documents of other conventions."""

CITATION_EVIDENCE_KEY = "otel_agent.citation.evidence_id"
CONFLICT_LIST_KEYS = ("otel_agent.conflict.claim_ids", "otel_agent.conflict.evidence_ids")
LINEAGE_KINDS = frozenset({"claim", "citation", "evidence_item", "source", "conflict"})


def lineage_key(record_id: str) -> int:
    """The first 8 bytes of the id's MD5, little-endian: DuckDB's ``md5_number_upper(id)``."""
    return int.from_bytes(hashlib.md5(record_id.encode("utf-8")).digest()[:8], "little")


def _listed(value: Any) -> list[str]:
    """The ids of a conflict's list attribute, as ``from_json(value, '["VARCHAR"]')`` reads them."""
    if not isinstance(value, list):
        return []
    return [text for text in (as_text(v) for v in value) if text is not None]


def record_lineage_keys(
    kind: str, record_id: str | None, record_ref: str | None, attributes: dict[str, Any]
) -> list[tuple[int, int | None]]:
    """SQL ``record_lineage_keys`` for one record span: its (key, next_key) rows, from its promoted columns and
    redacted attributes."""
    if kind == "claim" or kind == "source":
        pairs = [(record_id, None)]
    elif kind == "citation":
        pairs = [(record_ref, as_text(attributes.get(CITATION_EVIDENCE_KEY)))]
    elif kind == "evidence_item":
        pairs = [(record_id, record_ref)]
    elif kind == "conflict":
        pairs = [(i, None) for key in CONFLICT_LIST_KEYS for i in _listed(attributes.get(key))]
    else:
        return []
    return [(lineage_key(i), None if n is None else lineage_key(n)) for i, n in pairs if i is not None]


def document_lineage_keys(trace_id: str, span_id: str, n: int, document_id: str | None) -> list[tuple[int, int | None]]:
    """SQL ``document_lineage_keys`` for document n of a retrieval span: its (key, next_key) rows. Its evidence id
    leads on to its source id (the document's id, or ``doc:<trace>:<span>:<n>``), and that source id."""
    source = document_id if document_id is not None else f"doc:{trace_id}:{span_id}:{n}"
    source_key = lineage_key(source)
    return [(lineage_key(f"retrieval:{trace_id}:{span_id}:{n}"), source_key), (source_key, None)]


def is_retrieval_span_scope(scope_name: str) -> bool:
    """Half of SQL ``is_retrieval_span``: every span of an OpenInference instrumentation scope may carry
    retrieval documents."""
    return "openinference" in scope_name.lower()


def is_retrieval_span_name(name: str) -> bool:
    """The other half of SQL ``is_retrieval_span``: a GenAI retrieval span (ours included), named ``retrieval``
    or ``retrieval {data source}``."""
    return name == "retrieval" or name.startswith("retrieval ")
