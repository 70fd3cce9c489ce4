"""Test support for the evidence model: a store fed directly through the receiver's fold and writer (the
DuckDBSpanExporter's path, with a principal per request), and hand-built record spans with exact times."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor, load_rules
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store
from tests.conftest import dict_rows, new_store, rows
from tests.otlp_builders import kvs

# 2026-01-01T10:00:00Z: the time origin of hand-built scenarios.
T0 = dt.datetime(2026, 1, 1, 10, 0, 0)
T0_NS = int(T0.replace(tzinfo=dt.UTC).timestamp()) * 1_000_000_000


def at(seconds: float) -> dt.datetime:
    """T0 + seconds, as the naive UTC timestamp the macros take."""
    return T0 + dt.timedelta(seconds=seconds)


class Store:
    """An otel_agent store written in this process: OTLP requests go through decode_payload and the Writer."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.con = open_store(new_store(self.path))  # a copy of an empty store, unless the file exists
        self.writer = Writer(self.con, max_inflight_bytes=1 << 62)
        self.redactor = Redactor(load_rules(None, use_defaults=True))

    def ingest(self, request: Message | bytes, principal: str | None = None) -> None:
        payload = request if isinstance(request, bytes) else request.SerializeToString()
        batch = decode_payload("traces", PROTOBUF, payload, self.redactor, principal, time.time_ns() // 1000)
        self.writer.write(batch)

    def ingest_spans(self, spans: Sequence[Any], principal: str | None = None) -> None:
        self.ingest(encode_spans(spans), principal)

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        return rows(self, sql, params)

    def dicts(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        return dict_rows(self, sql, params)

    def write(self, fn: Any) -> Any:
        """Run a product-side write (reviews, trust) on the writer thread, as the receiver does."""
        return self.writer.run_write(fn)

    def close(self) -> None:
        self.writer.close()
        self.con.close()


def span(
    name: str,
    attributes: dict[str, Any],
    *,
    t: float = 0.0,
    service: str = "svc",
    trace_id: bytes | None = None,
    span_id: bytes | None = None,
    kind: int = trace_pb2.Span.SPAN_KIND_INTERNAL,
    duration_s: float = 0.0,
    links: Iterable[tuple[bytes, bytes, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """One span for ``request``: starts at T0 + t seconds."""
    start = T0_NS + int(t * 1e9)
    return {
        "service": service,
        "trace_id": trace_id or os.urandom(16),
        "span_id": span_id or os.urandom(8),
        "name": name,
        "kind": kind,
        "start": start,
        "end": start + int(duration_s * 1e9),
        "attributes": attributes,
        "links": list(links),
    }


def request(spans: Iterable[dict[str, Any]]) -> ExportTraceServiceRequest:
    """One ExportTraceServiceRequest; one ResourceSpans per service, spans in the given order."""
    req = ExportTraceServiceRequest()
    by_service: dict[str, Any] = {}
    for sp in spans:
        rs = by_service.get(sp["service"])
        if rs is None:
            rs = req.resource_spans.add()
            rs.resource.attributes.extend(kvs({"service.name": sp["service"]}))
            rs.scope_spans.add().scope.name = "tests"
            by_service[sp["service"]] = rs
        s = rs.scope_spans[0].spans.add()
        s.trace_id = sp["trace_id"]
        s.span_id = sp["span_id"]
        s.name = sp["name"]
        s.kind = sp["kind"]
        s.start_time_unix_nano = sp["start"]
        s.end_time_unix_nano = sp["end"]
        s.attributes.extend(kvs({k: v for k, v in sp["attributes"].items() if v is not None}))
        for trace_id, span_id, attrs in sp["links"]:
            link = s.links.add()
            link.trace_id = trace_id
            link.span_id = span_id
            link.attributes.extend(kvs(attrs))
    return req


def transition(
    operation_id: str,
    handoff_id: str,
    name: str,
    t: float,
    *,
    service: str = "delegator",
    expected_artifact: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A receipt transition span as the instrumentation emits it (`otel_agent.receipt.<name>`)."""
    attrs: dict[str, Any] = {
        "otel_agent.record.kind": "receipt_transition",
        "otel_agent.receipt.operation_id": operation_id,
        "otel_agent.receipt.handoff_id": handoff_id,
        "otel_agent.receipt.transition": name,
        "otel_agent.receipt.expected_artifact": expected_artifact,
    }
    attrs.update({f"otel_agent.receipt.{k}": v for k, v in extra.items()})
    kind = trace_pb2.Span.SPAN_KIND_PRODUCER if name == "delegated" else trace_pb2.Span.SPAN_KIND_INTERNAL
    return span(f"otel_agent.receipt.{name}", attrs, t=t, service=service, kind=kind)


def record(kind: str, t: float = 0.0, *, service: str = "svc", run_id: str | None = "run_1", **fields: Any) -> dict:
    """An evidence record span (source, evidence_item, claim, ...) with ``otel_agent.<prefix>.<field>`` attributes.

    ``fields`` use the attribute suffixes of the registry for the record's prefix, e.g.
    ``record("claim", id="c1", text="...", confidence="high")``."""
    prefix = {
        "source": "source",
        "evidence_item": "evidence",
        "claim": "claim",
        "citation": "citation",
        "conflict": "conflict",
        "artifact": "artifact",
        "memory_proposal": "memory_proposal",
        "decision": "decision",
        "badcase": "badcase",
    }[kind]
    attrs: dict[str, Any] = {"otel_agent.record.kind": kind, "otel_agent.run.id": run_id}
    for key, value in fields.items():
        attrs[f"otel_agent.{prefix}.{key}"] = value
    return span(f"otel_agent.{kind}", attrs, t=t, service=service)
