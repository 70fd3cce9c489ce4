"""Re-delivery changes nothing; arrival order changes nothing."""

from __future__ import annotations

import os
import random

import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import rows
from tests.otlp_builders import T0, kvs, span_request

# received_at and ingest_seq say when and in which group commit the store took a row, not what it is
SNAPSHOT = {
    "spans": "SELECT * EXCLUDE (received_at, ingest_seq) FROM spans ORDER BY trace_id, span_id",
    "span_events": "SELECT * EXCLUDE (ingest_seq) FROM span_events ORDER BY trace_id, span_id, event_index",
    "span_links": "SELECT * FROM span_links ORDER BY trace_id, span_id, link_index",
    "logs": "SELECT * EXCLUDE (received_at, ingest_seq) FROM logs ORDER BY time, content_hash",
    "metric_points": "SELECT * EXCLUDE (received_at) FROM metric_points ORDER BY time, content_hash",
}


def snapshot(receiver) -> dict[str, list]:
    return {name: rows(receiver, sql) for name, sql in SNAPSHOT.items()}


def post(receiver, path: str, body: bytes) -> None:
    resp = requests.post(
        receiver.http_address + path, data=body, headers={"Content-Type": "application/x-protobuf"}, timeout=30
    )
    assert resp.status_code == 200, resp.text


def a_trace(n: int = 30) -> list[dict]:
    """A trace of n spans: a root, then children each under a random earlier span, with events and links."""
    trace_id = os.urandom(16)
    spans = [{"trace_id": trace_id, "span_id": os.urandom(8), "name": "root", "start": T0}]
    for i in range(1, n):
        parent = random.choice(spans)
        spans.append(
            {
                "trace_id": trace_id,
                "span_id": os.urandom(8),
                "parent_span_id": parent["span_id"],
                "name": f"child{i}",
                "start": T0 + i * 1000,
                "attributes": {"i": i, "gen_ai.operation.name": "chat"},
            }
        )
    return spans


def with_events_and_links(spans: list[dict]) -> bytes:
    req = span_request(spans)
    for i, s in enumerate(req.resource_spans[0].scope_spans[0].spans):
        if i % 3 == 0:
            e = s.events.add()
            e.name, e.time_unix_nano = "step", s.start_time_unix_nano + 1
            e.attributes.extend(kvs({"n": i}))
        if i % 5 == 0:
            link = s.links.add()
            link.trace_id, link.span_id = os.urandom(16), os.urandom(8)
    return req.SerializeToString()


def logs_and_metrics() -> tuple[bytes, bytes]:
    logs = ExportLogsServiceRequest()
    sl = logs.resource_logs.add().scope_logs.add()
    for i in range(5):
        rec = sl.log_records.add()
        rec.time_unix_nano = T0 + i
        rec.body.string_value = f"line {i}"
    # two records identical in every field are two records the first time they arrive
    sl.log_records.add().CopyFrom(sl.log_records[0])
    metrics = ExportMetricsServiceRequest()
    m = metrics.resource_metrics.add().scope_metrics.add().metrics.add()
    m.name = "calls"
    for i in range(4):
        p = m.gauge.data_points.add()
        p.time_unix_nano = T0 + i
        p.as_int = i
    return logs.SerializeToString(), metrics.SerializeToString()


def test_same_request_three_times_adds_nothing(make_receiver):
    receiver = make_receiver()
    traces = with_events_and_links(a_trace())
    logs, metrics = logs_and_metrics()
    post(receiver, "/v1/traces", traces)
    post(receiver, "/v1/logs", logs)
    post(receiver, "/v1/metrics", metrics)
    first = snapshot(receiver)
    assert len(first["spans"]) == 30
    assert len(first["span_events"]) == 10
    assert len(first["span_links"]) == 6
    assert len(first["metric_points"]) == 4
    for _ in range(2):
        post(receiver, "/v1/traces", traces)
        post(receiver, "/v1/logs", logs)
        post(receiver, "/v1/metrics", metrics)
    assert snapshot(receiver) == first


def test_documented_log_key_collapses_identical_records(make_receiver):
    """Logs are keyed by (time, content hash): a record identical in every field, resource and scope
    included, is one record — documented in docs/schema.md."""
    receiver = make_receiver()
    logs, _ = logs_and_metrics()
    post(receiver, "/v1/logs", logs)
    assert rows(receiver, "SELECT count(*), count(DISTINCT content_hash) FROM logs") == [(5, 5)]


def test_order_and_splitting_do_not_matter(make_receiver):
    random.seed(7)
    bodies = [with_events_and_links(a_trace()) for _ in range(4)]
    in_order = make_receiver()
    for body in bodies:
        post(in_order, "/v1/traces", body)
    reference = snapshot(in_order)

    # The same spans: children before parents, each trace spread over many requests, some twice.
    shuffled = make_receiver()
    requests_bodies = []
    for body in bodies:
        req = ExportTraceServiceRequest.FromString(body)
        for s in req.resource_spans[0].scope_spans[0].spans:
            one = ExportTraceServiceRequest()
            one.resource_spans.add().CopyFrom(req.resource_spans[0])
            del one.resource_spans[0].scope_spans[0].spans[:]
            one.resource_spans[0].scope_spans[0].spans.add().CopyFrom(s)
            requests_bodies.append(one.SerializeToString())
    random.shuffle(requests_bodies)
    requests_bodies += random.sample(requests_bodies, 20)
    for body in requests_bodies:
        post(shuffled, "/v1/traces", body)
    assert len(reference["spans"]) == 120
    assert snapshot(shuffled) == reference
