"""Every column holds its own field (issue 12 §5): requests whose fields all carry different values go through a real
receiver, and each stored column is read back by name. A fold that bound columns by position would misfile
values as soon as a schema's order changed, and this fails then (checked by swapping two bindings of the span
fold by hand). Also: the fold's Python twins of SQL rules carry the SQL macros' names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent.fold import documents, lineage
from otel_agent.fold.logs import LOGS_SCHEMA
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA
from tests.conftest import rows
from tests.otlp_builders import kvs, resource_scope

TID, SID, PID = bytes(range(1, 17)), bytes(range(21, 29)), bytes(range(31, 39))
LINKED_TID, LINKED_SID = bytes(range(41, 57)), bytes(range(61, 69))
T = 1_764_000_000_000_000_000

RESOURCE_SCOPE = {
    "service_name": "svc-name",
    "resource_attributes": {"service.name": "svc-name", "r": "resource"},
    "resource_dropped_attributes_count": 14,
    "resource_entity_refs": [
        {"schema_url": "entity-schema", "type": "service", "id_keys": ["service.name"], "description_keys": []}
    ],
    "resource_schema_url": "resource-schema",
    "scope_name": "scope-name",
    "scope_version": "scope-version",
    "scope_attributes": {"s": "scope"},
    "scope_dropped_attributes_count": 15,
    "scope_schema_url": "scope-schema",
    "principal": None,
}
JSON_COLUMNS = {
    "attributes",
    "resource_attributes",
    "resource_entity_refs",
    "scope_attributes",
    "body",
    "metric_metadata",
    "exemplars",
}


def fill_resource_scope(request) -> Any:
    """Add one resource and one scope to ``request``, each field with a value of its own; returns the scope
    container (e.g. ``ScopeLogs``) for the caller's records."""
    resource_container, scope_container = resource_scope(request)
    resource_container.schema_url = "resource-schema"
    resource = resource_container.resource
    resource.attributes.extend(kvs({"service.name": "svc-name", "r": "resource"}))
    resource.dropped_attributes_count = 14
    resource.entity_refs.add(schema_url="entity-schema", type="service", id_keys=["service.name"])
    scope_container.schema_url = "scope-schema"
    scope = scope_container.scope
    scope.name, scope.version, scope.dropped_attributes_count = "scope-name", "scope-version", 15
    scope.attributes.extend(kvs({"s": "scope"}))
    return scope_container


def stored(receiver, table: str, schema, where: str = "true") -> dict:
    """The one row of ``table`` matching ``where``, every column of ``schema`` by name: timestamps as epoch
    nanoseconds, JSON parsed."""
    names = [f.name for f in schema if f.name != "received_at"]
    exprs = [
        f"epoch_ns({f.name})" if str(f.type).startswith("timestamp[ns") else f.name for f in schema if f.name in names
    ]
    (row,) = rows(receiver, f"SELECT {', '.join(exprs)} FROM {table} WHERE {where}")
    return {n: json.loads(v) if n in JSON_COLUMNS and v is not None else v for n, v in zip(names, row, strict=True)}


def post(receiver, path: str, message) -> None:
    resp = requests.post(
        receiver.http_address + path,
        data=message.SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=10,
    )
    assert resp.status_code == 200, resp.text


def test_span_event_and_link_columns_by_name(receiver):
    request = ExportTraceServiceRequest()
    ss = fill_resource_scope(request)
    span = ss.spans.add(
        trace_id=TID,
        span_id=SID,
        parent_span_id=PID,
        trace_state="state=1",
        flags=0x301,
        name="span-name",
        kind=3,
        start_time_unix_nano=T + 100,
        end_time_unix_nano=T + 350,
        dropped_attributes_count=11,
        dropped_events_count=12,
        dropped_links_count=13,
    )
    attributes = {
        "otel_agent.run.id": "run-1",
        "otel_agent.record.kind": "citation",
        "otel_agent.citation.id": "citation-1",
        "otel_agent.citation.claim_id": "claim-1",
    }
    span.attributes.extend(kvs(attributes))
    span.status.code, span.status.message = 2, "status-message"
    event = span.events.add(time_unix_nano=T + 200, name="event-name", dropped_attributes_count=16)
    event.attributes.extend(kvs({"e": "event"}))
    link = span.links.add(
        trace_id=LINKED_TID, span_id=LINKED_SID, trace_state="link-state", flags=0x101, dropped_attributes_count=17
    )
    link.attributes.extend(kvs({"l": "link"}))
    post(receiver, "/v1/traces", request)

    assert stored(receiver, "spans", SPANS_SCHEMA) == {
        "trace_id": TID.hex(),
        "span_id": SID.hex(),
        "parent_span_id": PID.hex(),
        "trace_state": "state=1",
        "flags": 0x301,
        "name": "span-name",
        "kind": "CLIENT",
        "start_time": T + 100,
        "end_time": T + 350,
        "duration_ns": 250,
        "status_code": "ERROR",
        "status_message": "status-message",
        "attributes": attributes,
        "dropped_attributes_count": 11,
        "dropped_events_count": 12,
        "dropped_links_count": 13,
        **RESOURCE_SCOPE,
        "run_id": "run-1",
        "record_kind": "citation",
        "record_id": "citation-1",
        "record_ref": "claim-1",
    }
    assert stored(receiver, "span_events", SPAN_EVENTS_SCHEMA) == {
        "trace_id": TID.hex(),
        "span_id": SID.hex(),
        "event_index": 0,
        "time": T + 200,
        "name": "event-name",
        "attributes": {"e": "event"},
        "dropped_attributes_count": 16,
    }
    assert stored(receiver, "span_links", SPAN_LINKS_SCHEMA) == {
        "trace_id": TID.hex(),
        "span_id": SID.hex(),
        "link_index": 0,
        "linked_trace_id": LINKED_TID.hex(),
        "linked_span_id": LINKED_SID.hex(),
        "trace_state": "link-state",
        "flags": 0x101,
        "attributes": {"l": "link"},
        "dropped_attributes_count": 17,
    }


def test_log_columns_by_name(receiver):
    request = ExportLogsServiceRequest()
    sl = fill_resource_scope(request)
    record = sl.log_records.add(
        time_unix_nano=T + 1,
        observed_time_unix_nano=T + 2,
        trace_id=TID,
        span_id=SID,
        flags=3,
        severity_number=17,
        severity_text="ERROR-TEXT",
        event_name="event-name",
        dropped_attributes_count=18,
    )
    record.body.string_value = "body-text"
    record.attributes.extend(kvs({"a": "log"}))
    post(receiver, "/v1/logs", request)
    row = stored(receiver, "logs", LOGS_SCHEMA)
    assert len(row.pop("content_hash")) == 32
    assert row == {
        "time": T + 1,
        "observed_time": T + 2,
        "trace_id": TID.hex(),
        "span_id": SID.hex(),
        "flags": 3,
        "severity_number": 17,
        "severity_text": "ERROR-TEXT",
        "event_name": "event-name",
        "body": "body-text",
        "attributes": {"a": "log"},
        "dropped_attributes_count": 18,
        **RESOURCE_SCOPE,
    }


def test_metric_point_columns_by_name(receiver):
    request = ExportMetricsServiceRequest()
    sm = fill_resource_scope(request)
    hist = sm.metrics.add(name="metric-name", description="metric-description", unit="metric-unit")
    hist.metadata.extend(kvs({"m": "meta"}))
    hist.histogram.aggregation_temporality = 1
    point = hist.histogram.data_points.add(
        start_time_unix_nano=T + 3,
        time_unix_nano=T + 4,
        count=19,
        sum=2.5,
        min=0.25,
        max=1.75,
        bucket_counts=[20, 21],
        explicit_bounds=[0.5],
        flags=1,
    )
    point.attributes.extend(kvs({"p": "point"}))
    point.exemplars.add(time_unix_nano=T + 5, as_int=22, trace_id=TID, span_id=SID)
    expo = sm.metrics.add(name="expo-name")
    expo.exponential_histogram.aggregation_temporality = 2
    e = expo.exponential_histogram.data_points.add(
        time_unix_nano=T + 6, count=23, sum=3.5, scale=-2, zero_count=24, zero_threshold=0.125
    )
    e.positive.offset, e.negative.offset = -3, 4
    e.positive.bucket_counts.extend([25])
    e.negative.bucket_counts.extend([26, 27])
    summary = sm.metrics.add(name="summary-name")
    summary.summary.data_points.add(time_unix_nano=T + 7, count=28, sum=4.5).quantile_values.add(
        quantile=0.5, value=0.375
    )
    post(receiver, "/v1/metrics", request)
    nothing = {n: None for n in METRIC_POINTS_SCHEMA.names if n not in {*RESOURCE_SCOPE, "content_hash", "received_at"}}
    common = {**nothing, **RESOURCE_SCOPE, "description": "", "unit": "", "attributes": {}, "flags": 0}
    row = stored(receiver, "metric_points", METRIC_POINTS_SCHEMA, "metric_name = 'metric-name'")
    assert len(row.pop("content_hash")) == 32
    assert row == {
        **common,
        "metric_name": "metric-name",
        "description": "metric-description",
        "unit": "metric-unit",
        "metric_metadata": {"m": "meta"},
        "type": "histogram",
        "temporality": "DELTA",
        "start_time": T + 3,
        "time": T + 4,
        "count": 19,
        "sum": 2.5,
        "min": 0.25,
        "max": 1.75,
        "bucket_counts": [20, 21],
        "explicit_bounds": [0.5],
        "exemplars": [
            {
                "time_unix_nano": T + 5,
                "value": 22,
                "trace_id": TID.hex(),
                "span_id": SID.hex(),
                "filtered_attributes": {},
            }
        ],
        "flags": 1,
        "attributes": {"p": "point"},
    }
    row = stored(receiver, "metric_points", METRIC_POINTS_SCHEMA, "metric_name = 'expo-name'")
    row.pop("content_hash")
    assert row == {
        **common,
        "metric_name": "expo-name",
        "type": "exponential_histogram",
        "temporality": "CUMULATIVE",
        "start_time": 0,
        "time": T + 6,
        "count": 23,
        "sum": 3.5,
        "exp_scale": -2,
        "exp_zero_count": 24,
        "exp_zero_threshold": 0.125,
        "exp_positive_offset": -3,
        "exp_positive_bucket_counts": [25],
        "exp_negative_offset": 4,
        "exp_negative_bucket_counts": [26, 27],
    }
    row = stored(receiver, "metric_points", METRIC_POINTS_SCHEMA, "metric_name = 'summary-name'")
    row.pop("content_hash")
    assert row == {
        **common,
        "metric_name": "summary-name",
        "type": "summary",
        "start_time": 0,
        "time": T + 7,
        "count": 28,
        "sum": 4.5,
        "quantile_values": [{"quantile": 0.5, "value": 0.375}],
    }


SQL_MACROS = {
    match.group(1)
    for path in (Path(__file__).parents[2] / "otel_agent" / "store" / "views" / "evidence").glob("*.sql")
    for match in re.finditer(r"CREATE OR REPLACE MACRO (\w+)", path.read_text())
}


def test_python_twins_of_sql_rules_have_the_sql_names():
    twins = {
        documents: [
            "retrieval_documents_in",
            "retrieval_document_indexes",
            "retrieval_document_at",
            "retrieval_metadata",
            "retrieval_provider",
            "genai_retrieval_documents",
        ],
        lineage: ["lineage_key", "record_lineage_keys", "document_lineage_keys"],
    }
    for module, names in twins.items():
        for name in names:
            assert callable(getattr(module, name)), (module.__name__, name)
            assert name in SQL_MACROS, name
    # the two halves of is_retrieval_span, tested once per scope and once per span
    assert lineage.is_retrieval_span_scope("OpenInference.x")
    assert lineage.is_retrieval_span_name("retrieval kb")
    assert "is_retrieval_span" in SQL_MACROS
