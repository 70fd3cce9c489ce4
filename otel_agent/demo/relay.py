"""The worker's spans over a pipe, for ``--embedded`` (DuckDB lets one process write a file).

The worker exports with ``PipeSpanExporter``: each batch becomes the OTLP protobuf ``ExportTraceServiceRequest``
the SDK would have sent on the wire, base64 in one JSON line on the worker's stdout. The delegator turns each
frame back into SDK spans (``spans_from_otlp``) and hands them to its own exporter — the embedded
``DuckDBSpanExporter`` — so both processes' spans go through the one writer, with the worker's resource
(service, pid), trace, links and events as the worker recorded them.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from typing import IO, Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as PbSpan
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

FRAME_KEY = "otlp_traces"
_IS_REMOTE = 0x200  # SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK


class JsonLines:
    """One JSON object per line on a text stream, safe to share between threads."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"), sort_keys=True)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


class PipeSpanExporter(SpanExporter):
    """Write each batch as an OTLP protobuf frame (``{"otlp_traces": "<base64>"}``) to ``lines``."""

    def __init__(self, lines: JsonLines) -> None:
        self._lines = lines

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if spans:
            payload = encode_spans(spans).SerializeToString()
            try:
                self._lines.send({FRAME_KEY: base64.b64encode(payload).decode("ascii")})
            except (OSError, ValueError):  # the delegator went away
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def frame_payload(message: dict[str, Any]) -> bytes | None:
    """The OTLP bytes of a frame message, or None when the message is something else."""
    data = message.get(FRAME_KEY)
    return None if data is None else base64.b64decode(data)


def spans_from_otlp(payload: bytes) -> list[ReadableSpan]:
    """SDK spans equivalent to an OTLP trace request (what ``encode_spans`` made of them, turned back)."""
    request = ExportTraceServiceRequest.FromString(payload)
    out: list[ReadableSpan] = []
    for rs in request.resource_spans:
        resource = Resource(_attributes(rs.resource.attributes), rs.schema_url or None)
        for ss in rs.scope_spans:
            scope = InstrumentationScope(
                ss.scope.name,
                ss.scope.version or None,
                ss.schema_url or None,
                _attributes(ss.scope.attributes) or None,
            )
            out.extend(_span(s, resource, scope) for s in ss.spans)
    return out


def _span(s: PbSpan, resource: Resource, scope: InstrumentationScope) -> ReadableSpan:
    trace_id = int.from_bytes(s.trace_id, "big")
    context = SpanContext(
        trace_id,
        int.from_bytes(s.span_id, "big"),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=_trace_state(s.trace_state),
    )
    parent = None
    if s.parent_span_id and any(s.parent_span_id):
        parent = SpanContext(
            trace_id,
            int.from_bytes(s.parent_span_id, "big"),
            is_remote=bool(s.flags & _IS_REMOTE),
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
    links = [
        Link(
            SpanContext(
                int.from_bytes(link.trace_id, "big"),
                int.from_bytes(link.span_id, "big"),
                is_remote=bool(link.flags & _IS_REMOTE),
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
                trace_state=_trace_state(link.trace_state),
            ),
            _attributes(link.attributes),
        )
        for link in s.links
    ]
    events = [Event(e.name, _attributes(e.attributes), e.time_unix_nano) for e in s.events]
    code = StatusCode(s.status.code)
    status = Status(code, s.status.message or None) if code is StatusCode.ERROR else Status(code)
    return ReadableSpan(
        name=s.name,
        context=context,
        parent=parent,
        resource=resource,
        attributes=_attributes(s.attributes),
        events=events,
        links=links,
        kind=SpanKind(max(s.kind - 1, 0)),  # OTLP numbers kinds from UNSPECIFIED = 0, the SDK from INTERNAL = 0
        status=status,
        start_time=s.start_time_unix_nano,
        end_time=s.end_time_unix_nano,
        instrumentation_scope=scope,
    )


def _trace_state(header: str) -> TraceState | None:
    return TraceState.from_header([header]) if header else None


def _attributes(pairs: Sequence[KeyValue]) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


def _value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return None if which is None else getattr(v, which)
