"""Request bytes (protobuf or OTLP/JSON) → FoldedBatch. The single entry point both transports and the
embedded exporter go through, so there is one path from OTLP to rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.logs import fold_logs
from otel_agent.fold.metrics import fold_metrics
from otel_agent.fold.otlp_json import parse_otlp_json
from otel_agent.fold.redact import Redactor
from otel_agent.fold.shadow import ShadowTraceRequest
from otel_agent.fold.traces import fold_traces

SIGNALS: dict[str, tuple[type, Callable[..., FoldedBatch]]] = {
    "traces": (ExportTraceServiceRequest, fold_traces),
    "logs": (ExportLogsServiceRequest, fold_logs),
    "metrics": (ExportMetricsServiceRequest, fold_metrics),
}

PROTOBUF = "protobuf"
JSON = "json"


def parse_request(signal: str, fmt: str, payload: bytes) -> Any:
    """The request as the message its fold takes: for traces the map-shaped ``ShadowTraceRequest``, which
    reads the same bytes (OTLP/JSON is parsed with the generated class, then re-read through it)."""
    message_cls, _ = SIGNALS[signal]
    if fmt == JSON:
        message = parse_otlp_json(payload, message_cls(), signal)
        if signal != "traces":
            return message
        payload = message.SerializeToString()
    target = ShadowTraceRequest if signal == "traces" else message_cls
    try:
        return target.FromString(payload)
    except DecodeError as exc:
        raise InvalidPayloadError(f"invalid protobuf {message_cls.__name__}: {exc}") from exc


def decode_payload(
    signal: str,
    fmt: str,
    payload: bytes,
    redactor: Redactor,
    principal: str | None,
    received_at_us: int,
) -> FoldedBatch:
    """Decode and fold one request body. Raises ``InvalidPayloadError`` for a body that cannot be stored."""
    request = parse_request(signal, fmt, payload)
    _, fold = SIGNALS[signal]
    batch = fold(request, redactor, principal, received_at_us)
    batch.payload_bytes = len(payload)
    return batch
