"""Request bytes (protobuf or OTLP/JSON) → FoldedBatch. The single entry point both transports and the
embedded exporter go through, so there is one path from OTLP to rows."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.otlp_json import parse_otlp_json
from otel_agent.fold.redact import Redactor
from otel_agent.signals import SIGNALS

PROTOBUF = "protobuf"
JSON = "json"


def parse_request(signal: str, fmt: str, payload: bytes) -> Any:
    """The request as the message its fold takes (``Signal.parse_class``: for traces the map-shaped
    ``ShadowTraceRequest``, which reads the same bytes; OTLP/JSON is parsed with the generated class, then
    re-read through it)."""
    spec = SIGNALS[signal]
    if fmt == JSON:
        message = parse_otlp_json(payload, spec.request_class(), signal)
        if spec.parse_class is spec.request_class:
            return message
        payload = message.SerializeToString()
    try:
        return spec.parse_class.FromString(payload)
    except DecodeError as exc:
        raise InvalidPayloadError(f"invalid protobuf {spec.request_class.__name__}: {exc}") from exc


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
    batch = SIGNALS[signal].fold(request, redactor, principal, received_at_us)
    batch.payload_bytes = len(payload)
    return batch
