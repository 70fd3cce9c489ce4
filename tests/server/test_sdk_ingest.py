"""Traces, logs and metrics from the real OpenTelemetry SDK exporters, over gRPC and HTTP/protobuf, with
and without gzip, land as rows with their values and types."""

from __future__ import annotations

import json
import logging

import pytest
from grpc import Compression as GrpcCompression
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from tests.conftest import rows

RESOURCE = Resource.create({"service.name": "research-agent", "deployment.environment": "test"})


# signal → the SDK's gRPC and HTTP/protobuf exporter classes of it
EXPORTERS = {
    "traces": (GrpcSpanExporter, HttpSpanExporter),
    "logs": (GrpcLogExporter, HttpLogExporter),
    "metrics": (GrpcMetricExporter, HttpMetricExporter),
}


def sdk_exporter(signal: str, transport: str, receiver, gzip: bool = False):
    """The real SDK exporter of ``signal`` over ``transport`` ("grpc" | "http") to the receiver."""
    grpc_exporter, http_exporter = EXPORTERS[signal]
    if transport == "grpc":
        return grpc_exporter(
            endpoint=receiver.grpc_address,
            insecure=True,
            compression=GrpcCompression.Gzip if gzip else None,
        )
    return http_exporter(
        endpoint=f"{receiver.http_address}/v1/{signal}",
        compression=HttpCompression.Gzip if gzip else HttpCompression.NoCompression,
    )


@pytest.mark.parametrize("transport", ["grpc", "http"])
@pytest.mark.parametrize("gzip", [False, True])
def test_traces_land_with_every_field(receiver, transport, gzip):
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(sdk_exporter("traces", transport, receiver, gzip)))
    tracer = provider.get_tracer("agent.tests", "1.2.3")
    with tracer.start_as_current_span("invoke_workflow research", kind=SpanKind.INTERNAL) as root:
        root_ctx = root.get_span_context()
        with tracer.start_as_current_span(
            "chat gpt-4o",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 1234,
                "gen_ai.request.temperature": 0.25,
                "otel_agent.cache.hit": False,
                "gen_ai.response.finish_reasons": ["stop", "length"],
                "otel_agent.scores": [0.5, 1.0],
            },
            links=[Link(root_ctx, {"otel_agent.link.kind": "handoff"})],
        ) as child:
            child.add_event("gen_ai.fallback", {"from": "openai", "attempt": 2})
            child.set_status(Status(StatusCode.ERROR, "rate limited"))
    provider.shutdown()

    (root_row,) = rows(
        receiver,
        "SELECT trace_id, span_id, parent_span_id, kind, status_code, service_name, scope_name, scope_version, "
        "resource_attributes->>'deployment.environment' FROM spans WHERE name = 'invoke_workflow research'",
    )
    assert root_row[0] == format(root_ctx.trace_id, "032x")
    assert root_row[1] == format(root_ctx.span_id, "016x")
    assert root_row[2] is None
    assert root_row[3:] == ("INTERNAL", "UNSET", "research-agent", "agent.tests", "1.2.3", "test")

    (child,) = rows(
        receiver,
        "SELECT parent_span_id, kind, status_code, status_message, duration_ns > 0, end_time >= start_time, "
        "(attributes->>'gen_ai.usage.input_tokens')::BIGINT, json_type(attributes, '$.\"gen_ai.usage.input_tokens\"'), "
        "json_type(attributes, '$.\"gen_ai.request.temperature\"'), attributes->'otel_agent.cache.hit', "
        "attributes->'gen_ai.response.finish_reasons', attributes->'otel_agent.scores' "
        "FROM spans WHERE name = 'chat gpt-4o'",
    )
    assert child[0] == format(root_ctx.span_id, "016x")
    assert child[1:6] == ("CLIENT", "ERROR", "rate limited", True, True)
    assert child[6:9] == (1234, "UBIGINT", "DOUBLE")
    assert json.loads(child[9]) is False
    assert json.loads(child[10]) == ["stop", "length"]
    assert json.loads(child[11]) == [0.5, 1.0]

    events = rows(receiver, "SELECT event_index, name, attributes FROM span_events")
    assert [(e[0], e[1], json.loads(e[2])) for e in events] == [
        (0, "gen_ai.fallback", {"from": "openai", "attempt": 2})
    ]
    links = rows(
        receiver,
        "SELECT link_index, linked_trace_id, linked_span_id, attributes->>'otel_agent.link.kind' FROM span_links",
    )
    assert links == [(0, format(root_ctx.trace_id, "032x"), format(root_ctx.span_id, "016x"), "handoff")]


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_logs_land(receiver, transport):
    exporter = sdk_exporter("logs", transport, receiver)
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = logging.getLogger(f"otel_agent.tests.{transport}")
    logger.propagate = False
    handler = LoggingHandler(level=logging.INFO, logger_provider=provider)
    logger.addHandler(handler)
    try:
        logger.warning("budget at %d%%", 90, extra={"otel_agent.run.id": "run_1"})
    finally:
        logger.removeHandler(handler)
        provider.shutdown()
    (row,) = rows(
        receiver,
        "SELECT severity_text, severity_number, body, attributes->>'otel_agent.run.id', service_name, "
        "time IS NOT NULL, length(content_hash) FROM logs",
    )
    assert row[0] == "WARN"
    assert row[1] == 13
    assert json.loads(row[2]) == "budget at 90%"
    assert row[3:] == ("run_1", "research-agent", True, 32)


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_metrics_land_all_types(receiver, transport):
    exporter = sdk_exporter("metrics", transport, receiver)
    reader = InMemoryMetricReader()
    provider = MeterProvider(
        resource=RESOURCE,
        metric_readers=[reader],
        views=[View(instrument_name="exp.latency", aggregation=ExponentialBucketHistogramAggregation())],
    )
    meter = provider.get_meter("agent.metrics")
    meter.create_counter("gen_ai.client.token.usage.count").add(5, {"gen_ai.token.type": "input"})
    meter.create_histogram("gen_ai.client.operation.duration", unit="s").record(0.5, {"gen_ai.operation.name": "chat"})
    meter.create_histogram("exp.latency").record(3.0)
    meter.create_up_down_counter("queue.depth").add(-2)
    meter.create_gauge("budget.remaining").set(1.5)
    data = reader.get_metrics_data()
    assert exporter.export(data).name == "SUCCESS"
    provider.shutdown()
    got = {
        r[0]: r[1:]
        for r in rows(
            receiver,
            "SELECT metric_name, type, temporality, is_monotonic, value_int, value_double, count, sum, "
            "len(bucket_counts), exp_scale IS NOT NULL, unit FROM metric_points",
        )
    }
    assert got["gen_ai.client.token.usage.count"][:4] == ("sum", "CUMULATIVE", True, 5)
    assert got["gen_ai.client.operation.duration"][0] == "histogram"
    assert got["gen_ai.client.operation.duration"][5:8] == (1, 0.5, 16)
    assert got["gen_ai.client.operation.duration"][-1] == "s"
    assert got["exp.latency"][0] == "exponential_histogram"
    assert got["exp.latency"][-2] is True
    assert got["queue.depth"][:4] == ("sum", "CUMULATIVE", False, -2)
    assert got["budget.remaining"][0] == "gauge"
    assert got["budget.remaining"][4] == 1.5


def test_decode_worker_processes(make_receiver):
    """The default production path: decoding in worker processes gives the same rows."""
    receiver = make_receiver(decode_workers=2)
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(sdk_exporter("traces", "grpc", receiver)))
    tracer = provider.get_tracer("t")
    for i in range(5):
        with tracer.start_as_current_span(f"s{i}", attributes={"i": i}):
            pass
    provider.shutdown()
    assert rows(receiver, "SELECT name, (attributes->>'i')::INT FROM spans ORDER BY name") == [
        (f"s{i}", i) for i in range(5)
    ]
