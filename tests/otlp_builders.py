"""Hand-built OTLP requests for tests that need exact control of the bytes (ids, invalid values)."""

from __future__ import annotations

import os
from typing import Any

import requests

# Python value → AnyValue by the SDK's own OTLP encoder (None → an empty AnyValue), not a hand-written copy.
from opentelemetry.exporter.otlp.proto.common._internal import _encode_value as any_value
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

T0 = 1_764_000_000_000_000_000


def kvs(attrs: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in attrs.items()]


_CONTAINERS = {
    ExportTraceServiceRequest: ("resource_spans", "scope_spans"),
    ExportLogsServiceRequest: ("resource_logs", "scope_logs"),
    ExportMetricsServiceRequest: ("resource_metrics", "scope_metrics"),
}


def resource_scope(request: Any, service: str | None = None, scope: str = "") -> tuple[Any, Any]:
    """Add one resource container and one scope container under it to an export request of any signal (e.g.
    ``ResourceLogs`` and its ``ScopeLogs``); ``service`` is set as the resource's ``service.name``, ``scope`` as
    the scope's name. Returns both containers, for the caller to fill."""
    resource_field, scope_field = _CONTAINERS[type(request)]
    resource_container = getattr(request, resource_field).add()
    if service is not None:
        resource_container.resource.attributes.extend(kvs({"service.name": service}))
    scope_container = getattr(resource_container, scope_field).add()
    scope_container.scope.name = scope
    return resource_container, scope_container


def span_request(spans: list[dict[str, Any]], service: str = "svc") -> ExportTraceServiceRequest:
    """spans: dicts with trace_id/span_id (bytes), optional parent_span_id, name, start, attributes…"""
    req = ExportTraceServiceRequest()
    _, ss = resource_scope(req, service, "tests")
    for i, sp in enumerate(spans):
        s = ss.spans.add()
        s.trace_id = sp.get("trace_id", os.urandom(16))
        s.span_id = sp.get("span_id", os.urandom(8))
        if sp.get("parent_span_id"):
            s.parent_span_id = sp["parent_span_id"]
        s.name = sp.get("name", f"span{i}")
        s.kind = sp.get("kind", 1)
        s.start_time_unix_nano = sp.get("start", T0 + i * 1000)
        s.end_time_unix_nano = sp.get("end", s.start_time_unix_nano + 5000)
        s.attributes.extend(kvs(sp.get("attributes", {})))
    return req


def post_traces(
    base_url: str,
    request: ExportTraceServiceRequest | bytes,
    *,
    timeout: float = 10,
    headers: dict[str, str] | None = None,
) -> requests.Response:
    """POST one OTLP/HTTP protobuf trace export (a request or its bytes) to ``base_url`` + ``/v1/traces``.

    The response is returned as it came (no raise): the tests assert on its status."""
    body = request if isinstance(request, bytes) else request.SerializeToString()
    return requests.post(
        base_url + "/v1/traces",
        data=body,
        headers={"Content-Type": "application/x-protobuf", **(headers or {})},
        timeout=timeout,
    )
