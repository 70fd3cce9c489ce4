"""The traces fold through the optional Rust extension (``otel_agent._native``, built from native/ by
``pip install`` where cargo is available), with ``fold/traces.py`` as the reference and the fallback.

The extension reads the request bytes itself and returns the span, event and link columns as Arrow buffers
(attributes as the JSON text the Python fold writes). It answers only for requests it folds exactly as the
Python path does and returns None for anything else (see native/src/lib.rs); so does this module when the
redaction rules would drop or hash one of the request's attribute keys, or when finishing the batch in
Python raises. The caller then runs the Python fold, which gives its own answer, or its own error: every
rejection, every refusal and every redacted request takes the Python path. What stays here is per resource,
per scope or per rare span: resource and scope values (``common.resource_info``), and for the spans that are
a record of ours or a retrieval span, the promoted record columns, lineage keys and retrieval documents — with
the same ``promote`` and ``lookups.SpanLookups`` as ``traces.fold_traces``, on the span's attributes read back
from their JSON text.

``OTEL_AGENT_NATIVE_FOLD=off`` forces the Python fold (``enabled``); tests/fold/test_native_fold.py feeds
the same requests through both and compares the tables.
"""

from __future__ import annotations

import bisect
import os
from types import SimpleNamespace
from typing import Any

import orjson
import pyarrow as pa
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.common import extend_resource_scope, fill_ingest_columns, resource_info
from otel_agent.fold.lineage import is_retrieval_span_name, is_retrieval_span_scope
from otel_agent.fold.lookups import SpanLookups
from otel_agent.fold.promoted import RECORD_KIND_KEY, promote, record_keys
from otel_agent.fold.redact import Action, Redactor
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA

try:
    import otel_agent._native as _native  # type: ignore[import-not-found]
except ImportError:  # built without cargo: the Python fold only
    _native = None

NATIVE_FOLD_ENV = "OTEL_AGENT_NATIVE_FOLD"


def available() -> bool:
    """Whether the extension was built into this installation."""
    return _native is not None


def enabled() -> bool:
    """Whether ``decode_payload`` folds traces through the extension: built, and not turned off."""
    return _native is not None and os.environ.get(NATIVE_FOLD_ENV, "").strip().lower() not in ("off", "0", "false")


def _array(field: pa.Field, column: Any) -> pa.Array:
    """An Arrow array of the extension's buffers: ``(length, nulls, validity, offsets, data)`` for strings,
    little-endian values for the rest."""
    if isinstance(column, tuple):
        n, nulls, validity, offsets, data = column
        buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(offsets), pa.py_buffer(data)]
        return pa.Array.from_buffers(pa.string(), n, buffers, null_count=nulls)
    width = 4 if pa.types.is_uint32(field.type) else 8
    return pa.Array.from_buffers(field.type, len(column) // width, [None, pa.py_buffer(column)], null_count=0)


def _arrays(schema: pa.Schema, columns: list[tuple[str, Any]]) -> dict[str, pa.Array]:
    return {name: _array(schema.field(name), column) for name, column in columns}


def _keys_kept(keys: list[str], redactor: Redactor) -> bool:
    """Whether every attribute key of the request is kept as it is by the redaction rules."""
    if not redactor.rules:
        return True
    decide = redactor.decide
    return all(decide(key) is Action.KEEP for key in keys)


def fold_traces_native(
    payload: bytes, redactor: Redactor, principal: str | None, received_at_us: int
) -> FoldedBatch | None:
    """The FoldedBatch of ExportTraceServiceRequest bytes ``payload``, equal to the Python fold's, or None
    when the Python fold must answer (see the module docstring)."""
    if _native is None:
        return None
    folded = _native.fold_traces(payload)
    if folded is None:
        return None
    items, spans, events, links, resources, groups, specials, keys = folded
    if not _keys_kept(keys, redactor):
        return None
    try:
        return _finish(items, spans, events, links, resources, groups, specials, redactor, principal, received_at_us)
    except Exception:  # DecodeError, InvalidPayloadError, …: the Python fold raises its own error for it
        return None


def _finish(
    items: int,
    spans: list,
    events: list,
    links: list,
    resources: list,
    groups: list,
    specials: list,
    redactor: Redactor,
    principal: str | None,
    received_at_us: int,
) -> FoldedBatch | None:
    arrays = _arrays(SPANS_SCHEMA, spans)
    rows = len(arrays["trace_id"])
    # resource and scope columns, in the order traces.fold_traces computes them (so that the same value raises)
    cols: dict[str, list] = {f.name: [] for f in SPANS_SCHEMA if f.name not in arrays}
    infos = []
    starts: list[int] = []
    retrieval_groups: list[bool] = []
    by_resource: dict[int, list] = {}
    for group in groups:
        by_resource.setdefault(group[0], []).append(group)
    first = 0
    for index, (raw, schema_url) in enumerate(resources):
        container = SimpleNamespace(resource=Resource.FromString(raw) if raw else Resource(), schema_url=schema_url)
        res = resource_info(container, redactor)
        infos.append(res)
        for _, scope_raw, scope_schema_url, n, retrieval in by_resource.get(index, ()):
            scope = InstrumentationScope.FromString(scope_raw) if scope_raw else InstrumentationScope()
            if is_retrieval_span_scope(scope.name) != retrieval:
                return None
            extend_resource_scope(cols, res, SimpleNamespace(scope=scope, schema_url=scope_schema_url), redactor, n)
            starts.append(first)
            retrieval_groups.append(retrieval)
            first += n
    fill_ingest_columns(cols, rows, principal, received_at_us)
    kind_col, id_col, ref_col = [None] * rows, [None] * rows, [None] * rows
    lookups = SpanLookups()
    if specials:
        record_id_keys = record_keys()
        for row, resource_index, attributes_json in specials:
            attributes = orjson.loads(attributes_json)
            et = arrays["end_time"][row].value
            if RECORD_KIND_KEY in attributes:
                _, record_kind, record_id, record_ref = promote(attributes, record_id_keys)
                kind_col[row], id_col[row], ref_col[row] = record_kind, record_id, record_ref
                lookups.add_record(record_kind, record_id, record_ref, attributes, et)
            name = arrays["name"][row].as_py()
            if retrieval_groups[bisect.bisect_right(starts, row) - 1] or is_retrieval_span_name(name):
                tid, sid = arrays["trace_id"][row].as_py(), arrays["span_id"][row].as_py()
                lookups.add_retrieval(tid, sid, et, attributes, infos[resource_index].service_name)
    cols["record_kind"], cols["record_id"], cols["record_ref"] = kind_col, id_col, ref_col
    for name, values in cols.items():
        arrays[name] = pa.array(values, type=SPANS_SCHEMA.field(name).type)
    return FoldedBatch(
        signal="traces",
        tables={
            "spans": pa.Table.from_arrays([arrays[f.name] for f in SPANS_SCHEMA], schema=SPANS_SCHEMA),
            "span_events": _table(SPAN_EVENTS_SCHEMA, events),
            "span_links": _table(SPAN_LINKS_SCHEMA, links),
            **lookups.tables(),
        },
        items=items,
        rejected=0,
        error_message="",
    )


def _table(schema: pa.Schema, columns: list) -> pa.Table:
    arrays = _arrays(schema, columns)
    return pa.Table.from_arrays([arrays[f.name] for f in schema], schema=schema)
