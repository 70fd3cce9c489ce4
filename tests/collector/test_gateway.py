"""SDK → Collector (collector_config/gateway.yaml) → receiver: every span, log record and metric point lands
exactly once with its resource and scope; a receiver that pushes back makes the Collector retry, and still
nothing is lost or stored twice."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import requests
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.collector import workload
from tests.collector.conftest import wait_for_count
from tests.collector.workload import Workload
from tests.conftest import rows


def _hex(value: int | None, width: int) -> str | None:
    return format(value, f"0{width}x") if value else None


def _scope(scope) -> tuple:
    return (scope.name, scope.version or None, scope.schema_url or None, dict(scope.attributes or {}))


def _resource(resource) -> tuple:
    attrs = dict(resource.attributes)
    return (attrs.get("service.name"), attrs, resource.schema_url or None)


def healthz(receiver) -> dict:
    return requests.get(receiver.http_address + "/healthz", timeout=10).json()


def assert_workload_stored_once(receiver, w: Workload) -> None:
    """Every item of ``w`` is in the receiver's tables once, with its ids, resource and scope."""
    # Spans: identity, parentage, name, kind, and the resource and scope they were recorded under.
    expected_spans = Counter(
        (
            _hex(s.context.trace_id, 32),
            _hex(s.context.span_id, 16),
            _hex(s.parent.span_id, 16) if s.parent else None,
            s.name,
            s.kind.name,
            s.status.status_code.name,
            _resource(s.resource)[0],
            json.dumps(dict(s.resource.attributes), sort_keys=True),
            s.resource.schema_url or None,
            *_scope(s.instrumentation_scope)[:3],
            json.dumps(_scope(s.instrumentation_scope)[3], sort_keys=True),
        )
        for s in w.spans
    )
    stored_spans = Counter(
        (
            *r[:9],
            r[9],
            r[10] or None,
            r[11] or None,
            json.dumps(json.loads(r[12]) if r[12] else {}, sort_keys=True),
        )
        for r in rows(
            receiver,
            "SELECT trace_id, span_id, parent_span_id, name, kind, status_code, service_name, "
            "resource_attributes, resource_schema_url, scope_name, scope_version, scope_schema_url, "
            "scope_attributes FROM spans",
        )
    )
    stored_spans = Counter(
        {
            (*k[:7], json.dumps(json.loads(k[7]), sort_keys=True), *k[8:]): n  # resource attrs: canonical JSON
            for k, n in stored_spans.items()
        }
    )
    assert stored_spans == expected_spans
    assert rows(receiver, "SELECT count(*) FROM span_events")[0][0] == w.n_events
    assert rows(receiver, "SELECT count(*) FROM span_links")[0][0] == w.n_links

    # Log records: body, severity, trace correlation, resource, scope.
    expected_logs = Counter()
    for record in w.logs:
        lr = record.log_record
        expected_logs[
            (
                json.dumps(lr.body),
                lr.severity_number.value,
                _hex(lr.trace_id, 32),
                _hex(lr.span_id, 16),
                json.dumps(dict(lr.attributes or {}), sort_keys=True),
                json.dumps(dict(record.resource.attributes), sort_keys=True),
                record.resource.schema_url or None,
                *_scope(record.instrumentation_scope)[:3],
                json.dumps(_scope(record.instrumentation_scope)[3], sort_keys=True),
            )
        ] += 1
    stored_logs = Counter(
        (
            json.dumps(json.loads(r[0])),
            r[1],
            r[2] or None,
            r[3] or None,
            json.dumps(json.loads(r[4]) if r[4] else {}, sort_keys=True),
            json.dumps(json.loads(r[5]), sort_keys=True),
            r[6] or None,
            r[7],
            r[8] or None,
            r[9] or None,
            json.dumps(json.loads(r[10]) if r[10] else {}, sort_keys=True),
        )
        for r in rows(
            receiver,
            "SELECT body, severity_number, trace_id, span_id, attributes, resource_attributes, "
            "resource_schema_url, scope_name, scope_version, scope_schema_url, scope_attributes FROM logs",
        )
    )
    assert stored_logs == expected_logs

    # Metric points: one per SDK data point, under its metric, resource and scope.
    expected_points = Counter()
    for rm in w.metrics.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    expected_points[
                        (
                            m.name,
                            json.dumps(dict(p.attributes or {}), sort_keys=True),
                            json.dumps(dict(rm.resource.attributes), sort_keys=True),
                            *_scope(sm.scope)[:3],
                            json.dumps(_scope(sm.scope)[3], sort_keys=True),
                        )
                    ] += 1
    stored_points = Counter(
        (
            r[0],
            json.dumps(json.loads(r[1]) if r[1] else {}, sort_keys=True),
            json.dumps(json.loads(r[2]), sort_keys=True),
            r[3],
            r[4] or None,
            r[5] or None,
            json.dumps(json.loads(r[6]) if r[6] else {}, sort_keys=True),
        )
        for r in rows(
            receiver,
            "SELECT metric_name, attributes, resource_attributes, scope_name, scope_version, scope_schema_url, "
            "scope_attributes FROM metric_points",
        )
    )
    assert stored_points == expected_points


@pytest.mark.parametrize(
    "transports",
    [("grpc", "http", "grpc"), ("http", "grpc", "http")],
    ids=["traces-grpc,logs-http,metrics-grpc", "traces-http,logs-grpc,metrics-http"],
)
def test_gateway_delivers_every_signal_exactly_once(make_receiver, make_collector, transports):
    receiver = make_receiver()
    collector = make_collector("gateway.yaml", OTEL_AGENT_RECEIVER_GRPC=receiver.grpc_address)
    w = workload.build(runs=4)
    traces_over, logs_over, metrics_over = transports
    workload.send(
        w,
        grpc_endpoint=collector.grpc_endpoint,
        http_url=collector.http_url,
        traces_over=traces_over,
        logs_over=logs_over,
        metrics_over=metrics_over,
    )
    assert wait_for_count([receiver], "spans", len(w.spans)) == len(w.spans)
    assert wait_for_count([receiver], "logs", len(w.logs)) == len(w.logs)
    assert wait_for_count([receiver], "metric_points", w.n_points) == w.n_points
    assert collector.stop() == 0  # a clean shutdown drains the Collector's queue: nothing more can arrive
    collector.assert_nothing_dropped()

    assert_workload_stored_once(receiver, w)
    # Exactly once on the wire too, not only in the tables (the receiver would absorb a re-delivery):
    # the receiver accepted each item in exactly one request.
    assert healthz(receiver)["items_committed"] == len(w.spans) + len(w.logs) + w.n_points


def test_gateway_retries_a_receiver_that_pushes_back(make_receiver, make_collector):
    # A 1-byte bound admits one request at a time, and the writer holds each commit 150 ms: the Collector's
    # 4 concurrent senders get RESOURCE_EXHAUSTED (with RetryInfo) for most requests at first.
    receiver = make_receiver(queue_max_bytes=1, batch_timeout_ms=150)
    collector = make_collector(
        "gateway.yaml",
        OTEL_AGENT_RECEIVER_GRPC=receiver.grpc_address,
        COLLECTOR_BATCH_SIZE="50",
        COLLECTOR_BATCH_MAX_SIZE="50",
        OTEL_AGENT_QUEUE_CONSUMERS="4",
    )
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=workload.PLANNER)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("e2e.backpressure", "1.0")
    n = 600
    for i in range(n):
        with tracer.start_as_current_span(f"span {i}", attributes={"i": i}):
            pass
    spans = memory.get_finished_spans()
    provider.shutdown()
    w = Workload(spans=spans, logs=[], metrics=workload.MetricsData(resource_metrics=[]), handoffs=[])
    workload.send(w, grpc_endpoint=collector.grpc_endpoint, http_url=collector.http_url, chunk=100)

    assert wait_for_count([receiver], "spans", n, timeout=90) == n
    health = healthz(receiver)
    assert health["refused"] > 0, f"the receiver never pushed back: {health}"
    assert collector.stop() == 0
    collector.assert_nothing_dropped()
    # The Collector retried RESOURCE_EXHAUSTED, waiting the receiver's RetryInfo delay ("Throttle (1.2s)"):
    # without RetryInfo it would have dropped those batches as a permanent error.
    retries = [line for line in collector.log.splitlines() if "Will retry" in line]
    assert any("Throttle (" in line and "ResourceExhausted" in line for line in retries), retries[:3]

    assert rows(receiver, "SELECT count(*), count(DISTINCT span_id), min((attributes->>'i')::INT), "
                "max((attributes->>'i')::INT) FROM spans") == [(n, n, 0, n - 1)]  # fmt: skip
    assert healthz(receiver)["items_committed"] == n  # every span accepted once: no request stored twice
