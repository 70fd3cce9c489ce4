"""A map-shaped view of OTLP trace requests, for decoding attributes without a message object per value.

Decoding ``Span.attributes`` (``repeated KeyValue``) through the generated classes creates two wrapper
objects per attribute and costs ~0.8 µs each — the largest single cost of ingestion. On the wire a
``KeyValue`` is exactly a protobuf map entry (key = field 1, value = field 2), and an ``AnyValue`` is a
length-delimited field like ``bytes``. So a message declared with ``map<string, bytes> attributes = 9``
parses the same bytes into a dict of key → raw AnyValue bytes in C, and ``anyvalue.decode_raw`` turns the
common scalars into Python values with a few byte operations (and a cache: agent telemetry repeats its
string values).

The shadow types are built at import time from the generated descriptors of opentelemetry-proto (copied,
then the attribute fields of Span, Span.Event and Span.Link re-declared as maps), so they follow the
installed OTLP version; nothing of OTLP is vendored. Resource and scope keep their generated types.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

_PACKAGE = "otel_agent.shadow.trace"
_OTLP_TRACE = "." + trace_pb2.DESCRIPTOR.package  # .opentelemetry.proto.trace.v1
_OTLP_COLLECTOR = "." + trace_service_pb2.DESCRIPTOR.package
_MAP_FIELDS = {"Span": ["attributes"], "Span.Event": ["attributes"], "Span.Link": ["attributes"]}

_F = descriptor_pb2.FieldDescriptorProto


def _rename(type_name: str) -> str:
    """Point references to the copied messages at their shadow copies (other OTLP types stay)."""
    for prefix, copied in (
        (_OTLP_TRACE + ".Span", ".Span"),
        (_OTLP_TRACE + ".ScopeSpans", ".ScopeSpans"),
        (_OTLP_TRACE + ".ResourceSpans", ".ResourceSpans"),
        (_OTLP_COLLECTOR + ".ExportTraceServiceRequest", ".ExportTraceServiceRequest"),
    ):
        if type_name == prefix or type_name.startswith(prefix + "."):
            return "." + _PACKAGE + copied + type_name[len(prefix) :]
    return type_name


def _as_map(message: descriptor_pb2.DescriptorProto, field_name: str, full_name: str) -> None:
    entry = message.nested_type.add(name=field_name.title().replace("_", "") + "Entry")
    entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=_F.TYPE_BYTES, label=_F.LABEL_OPTIONAL)
    entry.options.map_entry = True
    for field in message.field:
        if field.name == field_name:
            field.type = _F.TYPE_MESSAGE
            field.label = _F.LABEL_REPEATED
            field.type_name = f".{_PACKAGE}.{full_name}.{entry.name}"


def _walk(message: descriptor_pb2.DescriptorProto, path: str) -> None:
    for field in message.field:
        if field.type_name:
            field.type_name = _rename(field.type_name)
    for name in _MAP_FIELDS.get(path, []):
        _as_map(message, name, path)
    for nested in message.nested_type:
        if not nested.options.map_entry:
            _walk(nested, f"{path}.{nested.name}")


def _build() -> type:
    file = descriptor_pb2.FileDescriptorProto(name="otel_agent/shadow/trace.proto", package=_PACKAGE, syntax="proto3")
    file.dependency.extend([d.name for d in trace_pb2.DESCRIPTOR.dependencies] + [trace_pb2.DESCRIPTOR.name])
    for source in (
        trace_pb2.Span.DESCRIPTOR,
        trace_pb2.ScopeSpans.DESCRIPTOR,
        trace_pb2.ResourceSpans.DESCRIPTOR,
        trace_service_pb2.ExportTraceServiceRequest.DESCRIPTOR,
    ):
        copy = file.message_type.add()
        source.CopyToProto(copy)
        _walk(copy, copy.name)
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(file.name)
    except KeyError:
        pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.ExportTraceServiceRequest"))


ShadowTraceRequest = _build()
"""Parses ExportTraceServiceRequest bytes; span, event and link ``attributes`` are dicts key → AnyValue bytes."""
