"""TracerProviders for the demo's two processes, and their exporters.

Each process has its own provider (never the global one: the demo may run inside a program that has its own)
with a resource naming the service and the process id, and a ``BatchSpanProcessor``: the helpers' records
leave at the next batch, or at once when the code calls ``otel_agent.instrument.flush()`` — which the demo
does right after each receipt transition, as ``docs/semconv.md`` recommends.
"""

from __future__ import annotations

import os

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from otel_agent import __version__


def make_provider(service_name: str, exporter: SpanExporter) -> TracerProvider:
    resource = Resource.create(
        {
            "service.name": service_name,
            "service.version": __version__,
            "service.namespace": "otel-agent-demo",
            "process.pid": os.getpid(),
        }
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    return provider


def otlp_exporter(grpc_endpoint: str) -> SpanExporter:
    """The SDK's OTLP/gRPC span exporter, plaintext to a loopback receiver (proxies never apply)."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(
        endpoint=grpc_endpoint,
        insecure=True,
        timeout=30,
        channel_options=(("grpc.enable_http_proxy", 0),),  # type: ignore[arg-type]
    )
