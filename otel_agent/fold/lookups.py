"""The rows a traces fold adds to the two lookup tables beside the spans (``signals.TRACES.lookups``):
``lineage_keys`` of our evidence records (fold/lineage.py) and ``parsed_retrieval_documents`` of other conventions'
retrieval spans with their lineage keys (fold/documents.py).

One place for both traces folds, the Python one (``traces.fold_traces``) and the native one's finish
(``native._finish``), so that the two cannot fill them differently. Only record spans and retrieval spans reach
it: per-span work of the hot loop stays in the folds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from otel_agent.fold.batch import table
from otel_agent.fold.documents import PARSED_DOCUMENTS_SCHEMA, retrieval_documents_in
from otel_agent.fold.lineage import (
    DOCUMENT_KIND,
    LINEAGE_KEYS_SCHEMA,
    LINEAGE_KINDS,
    document_lineage_keys,
    record_lineage_keys,
)


class SpanLookups:
    """The ``lineage_keys`` and ``parsed_retrieval_documents`` columns of one request, column → values."""

    __slots__ = ("documents", "lineage")

    def __init__(self) -> None:
        self.lineage: dict[str, list] = {name: [] for name in LINEAGE_KEYS_SCHEMA.names}
        self.documents: dict[str, list] = {name: [] for name in PARSED_DOCUMENTS_SCHEMA.names}

    def add_record(
        self,
        record_kind: str | None,
        record_id: str | None,
        record_ref: str | None,
        attributes: dict[str, Any],
        end_time: int,
    ) -> None:
        """The lineage keys of a record span of ours (none unless its kind is one of ``LINEAGE_KINDS``)."""
        if record_kind is not None and record_kind in LINEAGE_KINDS:
            self._add_keys(record_lineage_keys(record_kind, record_id, record_ref, attributes), end_time, record_kind)

    def add_retrieval(
        self, trace_id: str, span_id: str, end_time: int, attributes: dict[str, Any], service_name: str | None
    ) -> None:
        """The documents of a retrieval span, each with its lineage keys."""
        documents = self.documents
        for row in retrieval_documents_in(trace_id, span_id, end_time, attributes, service_name):
            for column, value in row.items():
                documents[column].append(value)
            keys = document_lineage_keys(trace_id, span_id, row["doc_index"], row["document_id"])
            self._add_keys(keys, end_time, DOCUMENT_KIND)

    def _add_keys(self, pairs: Iterable[tuple[int, int | None]], end_time: int, kind: str) -> None:
        lineage = self.lineage
        for key, next_key in pairs:
            lineage["key"].append(key)
            lineage["end_time"].append(end_time)
            lineage["next_key"].append(next_key)
            lineage["kind"].append(kind)

    def tables(self) -> dict[str, pa.Table]:
        """The two tables, by the names ``FoldedBatch.tables`` uses."""
        return {
            "lineage_keys": table(self.lineage, LINEAGE_KEYS_SCHEMA),
            "parsed_retrieval_documents": table(self.documents, PARSED_DOCUMENTS_SCHEMA),
        }
