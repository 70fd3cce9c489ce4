"""SDK → Collector (collector_config/gateway.yaml) → receiver: every span, log record and metric point lands
exactly once with its resource and scope; a receiver that pushes back makes the Collector retry, and still
nothing is lost or stored twice."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import requests
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.collector import workload
from tests.collector.conftest import wait_for_count
from tests.collector.workload import Workload
from tests.conftest import rows

RESOURCE_SCOPE_COLUMNS = (
    "resource_attributes, resource_schema_url, scope_name, scope_version, scope_schema_url, scope_attributes"
)
"""The resource and scope columns every signal table carries, in ``_resource_scope``'s order."""


def _hex(value: int | None, width: int) -> str | None:
    return format(value, f"0{width}x") if value else None


def _canonical(value: Any) -> str:
    """Attributes as canonical JSON, from the SDK's mapping or from a stored JSON column (NULL or '' = none)."""
    if isinstance(value, str) or value is None:
        value = json.loads(value) if value else {}
    return json.dumps(dict(value), sort_keys=True)


def _resource_scope(
    attributes: Any, schema_url: str, scope_name: str, scope_version: str, scope_schema_url: str, scope_attributes: Any
) -> tuple:
    """The resource and scope an item was recorded under, the same whether read from the SDK's objects
    (``_recorded_under``) or from the six ``RESOURCE_SCOPE_COLUMNS`` of a stored row: empty strings as None,
    attributes as canonical JSON."""
    return (
        _canonical(attributes),
        schema_url or None,
        scope_name,
        scope_version or None,
        scope_schema_url or None,
        _canonical(scope_attributes),
    )


def _recorded_under(resource, scope) -> tuple:
    return _resource_scope(
        resource.attributes, resource.schema_url, scope.name, scope.version, scope.schema_url, scope.attributes
    )


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
            s.resource.attributes.get("service.name"),
            *_recorded_under(s.resource, s.instrumentation_scope),
        )
        for s in w.spans
    )
    stored_spans = Counter(
        (*r[:7], *_resource_scope(*r[7:]))
        for r in rows(
            receiver,
            "SELECT trace_id, span_id, parent_span_id, name, kind, status_code, service_name, "
            f"{RESOURCE_SCOPE_COLUMNS} FROM spans",
        )
    )
    assert stored_spans == expected_spans
    assert rows(receiver, "SELECT count(*) FROM span_events")[0][0] == w.n_events
    assert rows(receiver, "SELECT count(*) FROM span_links")[0][0] == w.n_links

    # Log records: body, severity, trace correlation, resource, scope.
    expected_logs = Counter(
        (
            json.dumps(record.log_record.body),
            record.log_record.severity_number.value,
            _hex(record.log_record.trace_id, 32),
            _hex(record.log_record.span_id, 16),
            _canonical(record.log_record.attributes or {}),
            *_recorded_under(record.resource, record.instrumentation_scope),
        )
        for record in w.logs
    )
    stored_logs = Counter(
        (
            json.dumps(json.loads(r[0])),
            r[1],
            r[2] or None,
            r[3] or None,
            _canonical(r[4]),
            *_resource_scope(*r[5:]),
        )
        for r in rows(
            receiver, f"SELECT body, severity_number, trace_id, span_id, attributes, {RESOURCE_SCOPE_COLUMNS} FROM logs"
        )
    )
    assert stored_logs == expected_logs

    # Metric points: one per SDK data point, under its metric, resource and scope.
    expected_points = Counter(
        (m.name, _canonical(p.attributes or {}), *_recorded_under(rm.resource, sm.scope))
        for rm in w.metrics.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for p in m.data.data_points
    )
    stored_points = Counter(
        (r[0], _canonical(r[1]), *_resource_scope(*r[2:]))
        for r in rows(receiver, f"SELECT metric_name, attributes, {RESOURCE_SCOPE_COLUMNS} FROM metric_points")
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
