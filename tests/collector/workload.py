"""A fixed agent workload, recorded once with the real SDK, that a test can send several times.

Spans come from ``otel_agent.instrument`` (runs, steps, provider and tool calls, sources, evidence, claims,
citations, artifacts, handoffs) and from a plain SDK tracer (events, links, error status, every span kind);
log records and metric points from the SDK too. Two services, ``planner`` and ``fact_checker``, each with
its own resource: the planner ``delegate()``s work in its run's trace, the fact checker ``accept()``s the
carrier in a new trace of its own, and the planner records the outcome in a third trace — so the two sides
of a handoff are in different traces and, behind a load balancer routing by trace id, usually on different
shards.

Everything is captured in memory (``InMemorySpanExporter`` etc.) and then exported with the real OTLP
exporters by :func:`send`, so sending the same workload to two destinations sends byte-for-byte the same
ids, timestamps and values. Trace and span ids come from a seeded generator: the workload is the same in
every run.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry import context as otel_context
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult, MetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

import otel_agent.instrument as oi

SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
PLANNER = Resource(
    {
        "service.name": "planner",
        "service.version": "3.1.4",
        "service.instance.id": "planner-1",
        "deployment.environment.name": "e2e",
        "host.cpu.count": 2,
    },
    schema_url=SCHEMA_URL,
)
WORKER = Resource(
    {"service.name": "fact_checker", "service.instance.id": "checker-7", "deployment.environment.name": "e2e"},
    schema_url=SCHEMA_URL,
)
RAW_SCOPE = ("e2e.raw", "2.0.1", "https://example.org/schemas/e2e/1", {"e2e.scope.flavour": "plain"})
LOG_SCOPE = ("e2e.logs", "0.9.0", "https://example.org/schemas/e2e/1", {"e2e.scope.flavour": "logs"})
METER_SCOPE = ("e2e.meter", "1.0.0", "https://example.org/schemas/e2e/1", {"e2e.scope.flavour": "metrics"})


class SeededIds(IdGenerator):
    """Deterministic non-zero ids, so the workload (and which trace is where) is the same in every run."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


@dataclass
class Workload:
    spans: Sequence[ReadableSpan]
    logs: Sequence[ReadableLogRecord]
    metrics: MetricsData
    handoffs: list[tuple[str, str]]  # (delegating trace id, accepting trace id), hex

    @property
    def trace_ids(self) -> set[str]:
        return {format(s.context.trace_id, "032x") for s in self.spans}

    @property
    def n_events(self) -> int:
        return sum(len(s.events) for s in self.spans)

    @property
    def n_links(self) -> int:
        return sum(len(s.links) for s in self.spans)

    @property
    def n_points(self) -> int:
        return sum(
            len(m.data.data_points)
            for rm in self.metrics.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
        )


class _Service:
    """One instrumented process: tracer, logger and meter providers over one resource, all in memory."""

    def __init__(self, resource: Resource, seed: int) -> None:
        self.spans = InMemorySpanExporter()
        self.tracing = TracerProvider(resource=resource, id_generator=SeededIds(seed))
        self.tracing.add_span_processor(SimpleSpanProcessor(self.spans))
        self.log_records = InMemoryLogRecordExporter()
        self.logging = LoggerProvider(resource=resource)
        self.logging.add_log_record_processor(SimpleLogRecordProcessor(self.log_records))
        self.reader = InMemoryMetricReader()
        self.metering = MeterProvider(resource=resource, metric_readers=[self.reader])
        name, version, schema_url, attributes = LOG_SCOPE
        self.logger = self.logging.get_logger(name, version, schema_url, attributes)
        name, version, schema_url, attributes = METER_SCOPE
        meter = self.metering.get_meter(name, version, schema_url, attributes)
        self.calls = meter.create_counter("e2e.calls", unit="{call}", description="calls made")
        self.latency = meter.create_histogram("e2e.latency", unit="s")
        self.queue = meter.create_up_down_counter("e2e.queue.depth")

    def log(self, body: str, severity: SeverityNumber, **attributes: str | int) -> None:
        self.logger.emit(
            context=otel_context.get_current(),
            severity_number=severity,
            severity_text=severity.name,
            body=body,
            attributes=attributes,
        )


def build(runs: int = 12, seed: int = 20260601) -> Workload:
    """Record ``runs`` planner runs, each with a handoff to the fact checker, plus plain SDK spans."""
    planner, worker = _Service(PLANNER, seed), _Service(WORKER, seed + 1)
    raw = planner.tracing.get_tracer(*RAW_SCOPE)
    handoffs: list[tuple[str, str]] = []
    for k in range(runs):
        with (
            oi.use_tracer_provider(planner.tracing),
            oi.flow_run("deep_research", run_id=f"run_{k:02d}", max_model_calls=8, max_cost_usd=0.5),
        ):
            with oi.step("search"):
                with oi.provider_call("openai", "gpt-4o", operation="chat") as call:
                    if k % 4 == 0:
                        call.retry("timeout")
                    call.set_usage(100 + k, 20 + k)
                    call.set_cost(0.001 * (k + 1))
                with oi.tool_invocation("web_search", provider="tavily"):
                    pass
                src = oi.source(f"https://example.org/doc/{k}", title=f"Doc {k}", provider="tavily")
                ev = oi.evidence_item(src, f"excerpt {k}", confidence="high" if k % 2 else "medium")
                planner.log("searched", SeverityNumber.INFO, **{"otel_agent.run.id": f"run_{k:02d}"})
            with oi.step("synthesize"):
                report = oi.create_artifact(f"Report {k}", artifact_type="markdown_report")
                v1 = report.add_version(f"# Report {k}\n- claim [1]", evidence_ids=[ev])
                claim = oi.claim(f"claim {k}", confidence="high", artifact_version_id=v1)
                oi.citation(claim, ev, citation_text="[1]")
            with oi.step("fact_check_handoff"):
                delegation = oi.delegate("fact_check_report", target="fact_checker")
            delegating_trace = format(trace_id_of(planner), "032x")
            planner.calls.add(1, {"run.parity": k % 2})
            planner.latency.record(0.1 * (k + 1), {"gen_ai.operation.name": "chat"})
        with oi.use_tracer_provider(worker.tracing):
            with oi.accept(delegation.carrier, expected_artifact="fact_check_report") as work:
                work.progress("sources_checked")
                if k % 3 == 0:
                    work.waiting("approval:fallback_source")
                worker.log(f"checked report {k}", SeverityNumber.WARN, report=k)
                work.completed(f"artv_{k:02d}")
            accepting_trace = format(trace_id_of(worker), "032x")
            worker.calls.add(2, {"run.parity": k % 2})
            worker.queue.add(1 if k % 2 else -1)
        with oi.use_tracer_provider(planner.tracing):
            # The outcome, recorded later by the planner: a root span of a third trace.
            delegation.verified() if k % 3 else delegation.failed("missing_artifact")
        handoffs.append((delegating_trace, accepting_trace))

    # Plain SDK spans: every kind, events, links (also across traces), error status, a log without a trace.
    with raw.start_as_current_span("batch job", kind=SpanKind.SERVER, attributes={"e2e.size": 3}) as root:
        root_ctx = root.get_span_context()
        for i, kind in enumerate((SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER, SpanKind.INTERNAL)):
            with raw.start_as_current_span(f"part {i}", kind=kind, attributes={"e2e.i": i, "e2e.ok": i != 2}) as s:
                s.add_event("e2e.tick", {"n": i})
                if i == 2:
                    s.set_status(Status(StatusCode.ERROR, "part 2 failed"))
    with raw.start_as_current_span("follow-up", links=[Link(root_ctx, {"e2e.link": "after"})]):
        planner.log("follow-up done", SeverityNumber.DEBUG)
    planner.log("no trace here", SeverityNumber.ERROR, code=7)
    planner.queue.add(5)

    spans = [*planner.spans.get_finished_spans(), *worker.spans.get_finished_spans()]
    logs = [*planner.log_records.get_finished_logs(), *worker.log_records.get_finished_logs()]
    metrics = MetricsData(
        resource_metrics=[
            *planner.reader.get_metrics_data().resource_metrics,
            *worker.reader.get_metrics_data().resource_metrics,
        ]
    )
    for service in (planner, worker):
        service.tracing.shutdown()
        service.logging.shutdown()
        service.metering.shutdown()
    return Workload(spans, logs, metrics, handoffs)


def trace_id_of(service: _Service) -> int:
    """The trace id of the span the service finished last."""
    return service.spans.get_finished_spans()[-1].context.trace_id


def send(
    workload: Workload,
    *,
    grpc_endpoint: str,
    http_url: str,
    chunk: int = 64,
    traces_over: str = "grpc",
    logs_over: str = "http",
    metrics_over: str = "grpc",
) -> None:
    """Export the workload with the real SDK OTLP exporters (traces in chunks) and check each succeeded.

    Empty parts are not sent."""
    if traces_over == "grpc":
        span_exporter = GrpcSpanExporter(endpoint=grpc_endpoint, insecure=True, timeout=30)
    else:
        span_exporter = HttpSpanExporter(endpoint=f"{http_url}/v1/traces", timeout=30)
    if logs_over == "grpc":
        log_exporter = GrpcLogExporter(endpoint=grpc_endpoint, insecure=True, timeout=30)
    else:
        log_exporter = HttpLogExporter(endpoint=f"{http_url}/v1/logs", timeout=30)
    if metrics_over == "grpc":
        metric_exporter = GrpcMetricExporter(endpoint=grpc_endpoint, insecure=True, timeout=30)
    else:
        metric_exporter = HttpMetricExporter(endpoint=f"{http_url}/v1/metrics", timeout=30)
    try:
        for i in range(0, len(workload.spans), chunk):
            result = span_exporter.export(workload.spans[i : i + chunk])
            assert result is SpanExportResult.SUCCESS, f"span export {i // chunk} failed: {result}"
        if workload.logs:
            result = log_exporter.export(workload.logs)
            assert result.name == "SUCCESS", f"log export failed: {result}"
        if workload.metrics.resource_metrics:
            result = metric_exporter.export(workload.metrics)
            assert result is MetricExportResult.SUCCESS, f"metric export failed: {result}"
    finally:
        span_exporter.shutdown()
        log_exporter.shutdown()
        metric_exporter.shutdown()
