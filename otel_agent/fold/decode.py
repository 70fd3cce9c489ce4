"""Request bytes (protobuf or OTLP/JSON) → FoldedBatch. The single entry point both transports and the
embedded exporter go through, so there is one path from OTLP to rows."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold import native
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.otlp_json import parse_otlp_json
from otel_agent.fold.redact import Redactor
from otel_agent.signals import SIGNALS

TRACES = "traces"
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
    return _parse_protobuf(signal, payload)


def _parse_protobuf(signal: str, payload: bytes) -> Any:
    spec = SIGNALS[signal]
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
    """Decode and fold one request body. Raises ``InvalidPayloadError`` for a body that cannot be stored.

    Traces go through the Rust fold when it is built and enabled (``fold/native.py``); whatever it does not
    answer for, the Python fold does."""
    if signal == TRACES and native.enabled():
        protobuf = (
            parse_otlp_json(payload, SIGNALS[signal].request_class(), signal).SerializeToString()
            if fmt == JSON
            else payload
        )
        batch = native.fold_traces_native(protobuf, redactor, principal, received_at_us)
        if batch is not None:
            batch.payload_bytes = len(payload)
            return batch
        request = _parse_protobuf(signal, protobuf)
    else:
        request = parse_request(signal, fmt, payload)
    batch = SIGNALS[signal].fold(request, redactor, principal, received_at_us)
    batch.payload_bytes = len(payload)
    return batch
