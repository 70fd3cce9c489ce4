"""Mutation fuzzing of every OTLP endpoint against a real receiver on loopback (issue 11 §4).

Seeded, structure-aware mutation, bounded in time: valid traces, logs and metrics requests (evidence records,
retrieval documents in every form, every AnyValue and metric type) are mutated field by field through the
protobuf descriptors (the values that broke the receiver before: timestamps of 2^63 and more, enum values out of
range, odd strings and keys, nested values), then as bytes (bit flips, cuts, insertions: bad UTF-8 inside attribute
values) or, for OTLP/JSON, node by node (numbers such as ``1e400``, lone surrogates, wrong types, deep nesting) and
as text; some bodies are gzipped, some of those corrupted. Bodies go over HTTP (protobuf and JSON) and gRPC, and a
few to the query and review APIs. Every reply must be a success or partial success, or a 4xx / non-INTERNAL status
with a ``google.rpc.Status`` that says why — never 5xx / INTERNAL, never a traceback in the log — and afterwards
the receiver stores a valid request of each signal with the right rows.

``OTEL_AGENT_FUZZ_SEED`` picks another sequence, ``OTEL_AGENT_FUZZ_SECONDS`` (default 35) the time spent on it.
A failing case is written under pytest's temporary directory with the seed of its case, ready to be added to
``fuzz_corpus/`` (see its README), whose files are replayed first as regression cases.
"""

from __future__ import annotations

import base64
import collections
import concurrent.futures
import copy
import gzip
import json
import math
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import requests
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from otel_agent.api.v1 import query_pb2, review_pb2
from otel_agent.fold.anyvalue import MAX_DEPTH
from tests.conftest import rows
from tests.otlp_builders import T0, any_value, kvs, resource_scope
from tests.server.test_malformed import field, nested_value

SEED = int(os.environ.get("OTEL_AGENT_FUZZ_SEED", "20261201"))
# 15 s in the suite (its 20-minute budget on 2 cores; it asserts it got past the parser often enough); set
# OTEL_AGENT_FUZZ_SECONDS for a longer hunt, and OTEL_AGENT_FUZZ_SEED for other cases
BUDGET_S = float(os.environ.get("OTEL_AGENT_FUZZ_SECONDS", "15"))
CORPUS = Path(__file__).parent / "fuzz_corpus"

RESPONSES = {
    "traces": ExportTraceServiceResponse,
    "logs": ExportLogsServiceResponse,
    "metrics": ExportMetricsServiceResponse,
    "query": query_pb2.QueryResponse,
    "review": review_pb2.ReviewResponse,
}
GRPC_EXPORT = {
    "traces": "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    "logs": "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    "metrics": "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
}
# gRPC codes a malformed request may get: the problem is the request's, said in a status (never INTERNAL/UNKNOWN)
CLIENT_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
}


# --- seeds: valid requests that reach every branch of the folds -------------------------------------------------


def trace_seed(rnd: random.Random) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add(schema_url="https://opentelemetry.io/schemas/1.26.0")
    rs.resource.attributes.extend(kvs({"service.name": "fuzz-agent", "host.name": "h1"}))
    trace_id = rnd.randbytes(16)
    spans: list[tuple[str, dict[str, Any]]] = [
        ("chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 12, "ratio": 0.5}),
        ("otel_agent.claim", {"otel_agent.record.kind": "claim", "otel_agent.claim.id": "c1",
                              "otel_agent.run.id": "r"}),
        ("otel_agent.citation", {"otel_agent.record.kind": "citation", "otel_agent.citation.claim_id": "c1",
                                 "otel_agent.citation.evidence_id": "e1"}),
        ("otel_agent.evidence_item", {"otel_agent.record.kind": "evidence_item", "otel_agent.evidence.id": "e1",
                                      "otel_agent.evidence.source_id": "s1"}),
        ("otel_agent.conflict", {"otel_agent.record.kind": "conflict", "otel_agent.conflict.claim_ids": ["c1", "c2"],
                                 "otel_agent.conflict.evidence_ids": ["e1"]}),
        ("retrieval kb", {"gen_ai.data_source.id": "kb", "gen_ai.retrieval.documents": json.dumps(
            [{"id": "d1", "score": 0.9, "content": "text", "metadata": {"url": "https://x"}}])}),
        ("retrieval", {"retrieval.documents": [{"document.id": "d2", "document.score": 0.5}]}),
        ("bytes and maps", {"blob": b"\x00\xff", "map": {"a": 1, "b": [True, 2.5]}, "nan": math.nan}),
    ]  # fmt: skip
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "fuzz", "1.0"
    ss.scope.attributes.extend(kvs({"scope.attr": "v"}))
    oi = rs.scope_spans.add()
    oi.scope.name = "openinference.instrumentation.fuzz"
    for i, (name, attributes) in enumerate(spans):
        span = (oi if i == 6 else ss).spans.add(
            trace_id=trace_id,
            span_id=rnd.randbytes(8),
            parent_span_id=rnd.randbytes(8) if i else b"",
            name=name,
            kind=i % 6,
            start_time_unix_nano=T0 + i * 1000,
            end_time_unix_nano=T0 + i * 1000 + 500,
            flags=0x101,
            trace_state="k=v",
        )
        span.attributes.extend(kvs(attributes))
        span.status.code, span.status.message = i % 3, "status"
        if i % 2:
            span.events.add(time_unix_nano=T0 + i, name="ev").attributes.extend(kvs({"attempt": i}))
        if i % 3 == 0:
            link = span.links.add(trace_id=rnd.randbytes(16), span_id=rnd.randbytes(8), flags=0x300)
            link.attributes.extend(kvs({"link.kind": "follows"}))
    oi.spans[0].attributes.extend(
        kvs({"retrieval.documents.0.document.id": "d3", "retrieval.documents.0.document.content": "c"})
    )
    return req


def log_seed(rnd: random.Random) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    _, sl = resource_scope(req, "fuzz-agent", "fuzz")
    bodies = ["plain text", {"score": 0.9, "nested": {"list": [1, "two", None]}}, b"\x01\x02", 7, [1.5, False]]
    for i, body in enumerate(bodies):
        rec = sl.log_records.add(
            time_unix_nano=T0 + i,
            observed_time_unix_nano=T0 + i + 1,
            severity_number=9 + i,
            severity_text="INFO",
            event_name="gen_ai.evaluation.result" if i == 1 else "",
            flags=1,
        )
        if body is not None:
            rec.body.CopyFrom(any_value(body))
        rec.attributes.extend(kvs({"gen_ai.evaluation.name": "rel", "i": i}))
        if i % 2:
            rec.trace_id, rec.span_id = rnd.randbytes(16), rnd.randbytes(8)
    return req


def metric_seed(rnd: random.Random) -> ExportMetricsServiceRequest:
    req = ExportMetricsServiceRequest()
    _, sm = resource_scope(req, "fuzz-agent", "fuzz")
    exemplar = {"time_unix_nano": T0, "as_double": 0.2, "trace_id": rnd.randbytes(16), "span_id": rnd.randbytes(8)}
    gauge = sm.metrics.add(name="g", unit="1", description="gauge")
    gauge.gauge.data_points.add(time_unix_nano=T0, as_double=1.5).attributes.extend(kvs({"k": "v"}))
    total = sm.metrics.add(name="gen_ai.client.token.usage", unit="{token}")
    total.sum.aggregation_temporality, total.sum.is_monotonic = 1, True
    total.sum.data_points.add(time_unix_nano=T0, start_time_unix_nano=T0 - 10, as_int=77).exemplars.add(**exemplar)
    hist = sm.metrics.add(name="gen_ai.client.operation.duration", unit="s")
    hist.histogram.aggregation_temporality = 2
    hist.histogram.data_points.add(
        time_unix_nano=T0, count=3, sum=1.5, min=0.1, max=1.0, bucket_counts=[1, 2], explicit_bounds=[0.5]
    ).exemplars.add(**exemplar)
    expo = sm.metrics.add(name="expo")
    expo.exponential_histogram.aggregation_temporality = 1
    point = expo.exponential_histogram.data_points.add(time_unix_nano=T0, count=2, scale=3, zero_count=1)
    point.positive.offset, point.negative.offset = -2, 1
    point.positive.bucket_counts.extend([1, 0, 1])
    summary = sm.metrics.add(name="summary")
    summary.summary.data_points.add(time_unix_nano=T0, count=4, sum=2.0).quantile_values.add(quantile=0.5, value=0.4)
    gauge.metadata.extend(kvs({"meta": "data"}))
    return req


SEEDS = {"traces": trace_seed, "logs": log_seed, "metrics": metric_seed}


# --- protobuf mutation: through the descriptors, then as bytes ----------------------------------------------------

F = FieldDescriptor
U64 = [0, 1, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1]
I64 = [-(2**63), -1, 0, 1, 2**63 - 1]
I32 = [-(2**31), -1, 0, 1, 2, 3, 5, 6, 7, 25, 2**31 - 1]
U32 = [0, 1, 2**31, 2**32 - 1]
DOUBLES = [math.nan, math.inf, -math.inf, -0.0, 1e308, -1e308, 5e-324, 0.5]
STRINGS = [
    "",
    "\x00",
    "é漢字🙂\u2028",
    "x" * 5000,
    "retrieval",
    "retrieval kb",
    "openinference.instrumentation.x",
    "claim",
    "citation",
    "evidence_item",
    "conflict",
    "source",
    "[",
    "null",
    "1e400",
    '[{"id": 5, "score": "1e400", "metadata": "{\\"url\\": [1]}"}]',
    '{"url": {"a": 1}}',
    '[{"id": ' + "[" * 300 + "]" * 300 + "}]",
    '[{"id": "d", "metadata": "' + "[" * 300 + "]" * 300 + '"}]',
    "٣",
]
KEYS = [
    "service.name",
    "otel_agent.record.kind",
    "otel_agent.run.id",
    "otel_agent.step.id",
    "otel_agent.claim.id",
    "otel_agent.citation.evidence_id",
    "otel_agent.conflict.claim_ids",
    "retrieval.documents",
    "retrieval.documents.0.document.id",
    "retrieval.documents.0.document.score",
    "retrieval.documents.0.document.metadata",
    "retrieval.documents.2147483648.document.id",
    "retrieval.documents.٣.document.id",
    "retrieval.documents." + "9" * 5000 + ".document.content",
    "gen_ai.retrieval.documents",
    "gen_ai.provider.name",
    "password",
    "db.password.value",
    "bytesValue",
    "doubleValue",
    "kvlistValue",
    "",
]
BYTES = [b"", b"\x00" * 8, b"\x00" * 16, b"\xff" * 16, b"\x01" * 7, b"\x02" * 17]
SCALARS: dict[int, list[Any]] = {
    F.TYPE_UINT64: U64,
    F.TYPE_FIXED64: U64,
    F.TYPE_INT64: I64,
    F.TYPE_SINT64: I64,
    F.TYPE_SFIXED64: I64,
    F.TYPE_INT32: I32,
    F.TYPE_SINT32: I32,
    F.TYPE_SFIXED32: I32,
    F.TYPE_ENUM: I32,
    F.TYPE_UINT32: U32,
    F.TYPE_FIXED32: U32,
    F.TYPE_DOUBLE: DOUBLES,
    F.TYPE_FLOAT: DOUBLES,
    F.TYPE_BOOL: [True, False],
    F.TYPE_STRING: STRINGS,
    F.TYPE_BYTES: BYTES,
}


def random_value(rnd: random.Random, depth: int) -> AnyValue:
    """A random AnyValue, sometimes nested up to one level past the limit."""
    value = AnyValue()
    kind = rnd.randrange(8) if depth > 0 else rnd.randrange(5)
    if kind == 0:
        value.string_value = rnd.choice(STRINGS)
    elif kind == 1:
        value.int_value = rnd.choice(I64)
    elif kind == 2:
        value.double_value = rnd.choice(DOUBLES)
    elif kind == 3:
        value.bool_value = rnd.random() < 0.5
    elif kind == 4:
        value.bytes_value = rnd.choice(BYTES)
    elif kind in (5, 6):
        for _ in range(rnd.randrange(3)):
            value.array_value.values.append(random_value(rnd, depth - 1))
        if not value.array_value.values:
            value.array_value.SetInParent()
    else:
        for _ in range(rnd.randrange(3)):
            value.kvlist_value.values.add(key=rnd.choice(KEYS), value=random_value(rnd, depth - 1))
        if not value.kvlist_value.values:
            value.kvlist_value.SetInParent()
    return value


def deep_value(rnd: random.Random, depth: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for _ in range(depth):
        outer = AnyValue()
        if rnd.random() < 0.5:
            outer.array_value.values.append(value)
        else:
            outer.kvlist_value.values.add(key="k", value=value)
        value = outer
    return value


def sites(message: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (message, field) of a message tree, unset fields included."""
    for fd in message.DESCRIPTOR.fields:
        out.append((message, fd))
        if fd.message_type is None:
            continue
        if fd.is_repeated:
            for sub in getattr(message, fd.name):
                sites(sub, out)
        elif message.HasField(fd.name):
            sites(getattr(message, fd.name), out)
    return out


def mutate_field(rnd: random.Random, message: Any, fd: Any) -> None:
    if fd.message_type is None:
        value = rnd.choice(SCALARS[fd.type])
        if fd.is_repeated:
            getattr(message, fd.name).append(value)
        else:
            setattr(message, fd.name, value)
        return
    name = fd.message_type.full_name
    if name == AnyValue.DESCRIPTOR.full_name and not fd.is_repeated:
        choice = rnd.random()
        depth = rnd.choice([MAX_DEPTH, MAX_DEPTH + 1]) if choice < 0.1 else 3  # deeper: in mutate_bytes
        getattr(message, fd.name).CopyFrom(deep_value(rnd, depth) if choice < 0.1 else random_value(rnd, depth))
    elif name == KeyValue.DESCRIPTOR.full_name:
        getattr(message, fd.name).add(key=rnd.choice(KEYS), value=random_value(rnd, 3))
    elif fd.is_repeated:
        items = getattr(message, fd.name)
        if items and rnd.random() < 0.6:
            items.add().CopyFrom(rnd.choice(items))  # a copy: duplicates within one request
        elif items and rnd.random() < 0.5:
            del items[rnd.randrange(len(items))]
        else:
            items.add()
    elif rnd.random() < 0.5:
        message.ClearField(fd.name)
    else:
        getattr(message, fd.name).SetInParent()


def mutate_message(rnd: random.Random, message: Any) -> Any:
    message = copy.deepcopy(message)
    for _ in range(rnd.choice([1, 1, 2, 3, 6])):
        target, fd = rnd.choice(sites(message, []))
        mutate_field(rnd, target, fd)
    return message


def mutate_bytes(rnd: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes(rnd.randbytes(rnd.randrange(1, 64)))
    buf = bytearray(data)
    for _ in range(rnd.choice([1, 1, 2, 4])):
        op, pos = rnd.randrange(7), rnd.randrange(len(buf) or 1)
        if op == 0 and buf:
            buf[pos] ^= 1 << rnd.randrange(8)
        elif op == 1:
            buf = buf[: rnd.randrange(len(buf) + 1)]
        elif op == 2:
            buf[pos:pos] = rnd.randbytes(rnd.randrange(1, 9))
        elif op == 3 and buf:
            buf[pos] = rnd.choice([0x00, 0x7F, 0x80, 0xFF, 0xC0, 0xED])
        elif op == 4:
            end = min(len(buf), pos + rnd.randrange(1, 33))
            buf[pos:pos] = buf[pos:end]
        elif op == 5:
            del buf[pos : pos + rnd.randrange(1, 17)]
        else:  # a field appended at the end of the request: more resources, or garbage ones
            buf += field(1, rnd.choice([b"", rnd.randbytes(12), field(1, field(1, nested_value(200)))]))
    return bytes(buf)


# --- OTLP/JSON mutation: node by node, then as text ---------------------------------------------------------------

RAW_TOKENS = [
    "1e400",
    "-1e400",
    '"\\ud800"',
    '"x\\udc00"',
    "18446744073709551616",
    "-9223372036854775809",
    "9223372036854775808",
    "1.5",
    "-1",
    "0",
    "3",
    "true",
    "null",
    '"NaN"',
    '"-Infinity"',
    "[]",
    "{}",
    '"zz"',
    '""',
    '"' + "0" * 33 + '"',
    '"AAAA"',
    "[" * 3000 + "]" * 3000,
]
ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def otlp_json(message: Any) -> Any:
    """The OTLP/JSON form of a request: protobuf's JSON mapping with hex trace and span ids."""
    doc = json_format.MessageToDict(message)

    def hexify(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ID_KEYS and isinstance(value, str):
                    node[key] = base64.b64decode(value).hex()
                else:
                    hexify(value)
        elif isinstance(node, list):
            for item in node:
                hexify(item)

    hexify(doc)
    return doc


def json_sites(node: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            json_sites(value, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.append((node, i))
            json_sites(value, out)
    return out


def deep_json_value(depth: int) -> Any:
    value: Any = {"stringValue": "x"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


def mutate_json(rnd: random.Random, doc: Any) -> bytes:
    raw: dict[str, str] = {}
    for _ in range(rnd.choice([1, 1, 2, 3])):
        found = json_sites(doc, [])
        if not found:
            break
        container, key = rnd.choice(found)
        op = rnd.randrange(6)
        if op <= 1:
            marker = f"@@raw{len(raw)}@@"
            raw[marker] = rnd.choice(RAW_TOKENS)
            container[key] = marker
        elif op == 2:
            container[key] = rnd.choice([[container[key]], {"v": container[key]}, str(container[key]), 12, None])
        elif op == 3 and isinstance(container, dict):
            del container[key]
        elif op == 4:
            container[key] = deep_json_value(rnd.choice([MAX_DEPTH, MAX_DEPTH + 1, 60]))
        else:
            container[key] = copy.deepcopy(rnd.choice(found)[0])
    text = json.dumps(doc)
    for marker, token in raw.items():
        text = text.replace(f'"{marker}"', token)
    data = text.encode()
    return mutate_bytes(rnd, data) if rnd.random() < 0.15 else data


# --- sending and checking -----------------------------------------------------------------------------------------


def api_seed(rnd: random.Random, api: str, fmt: str) -> bytes:
    if api == "query":
        message: Any = query_pb2.QueryRequest(sql="SELECT count(*) FROM spans", max_rows=5)
    else:
        message = review_pb2.ReviewRequest(target_kind="claim", target_id="none", decision="approve", reviewer="fz")
    if fmt == "json":
        return mutate_json(rnd, json_format.MessageToDict(message))
    return mutate_bytes(rnd, message.SerializeToString())


def make_case(rnd: random.Random, seeds: dict[str, Any]) -> tuple[str, str, bytes]:
    """(target, fmt, body): target a signal or an API, fmt protobuf or json."""
    fmt = "json" if rnd.random() < 0.4 else "protobuf"
    if rnd.random() < 0.04:
        api = rnd.choice(["query", "review"])
        return api, fmt, api_seed(rnd, api, fmt)
    signal = rnd.choice(list(seeds))
    message = mutate_message(rnd, seeds[signal]) if rnd.random() < 0.8 else seeds[signal]
    if fmt == "json":
        return (
            signal,
            fmt,
            mutate_json(rnd, otlp_json(message)) if rnd.random() < 0.7 else json.dumps(otlp_json(message)).encode(),
        )
    data = message.SerializeToString()
    return signal, fmt, mutate_bytes(rnd, data) if rnd.random() < 0.5 else data


def problem_with_http_reply(resp: requests.Response, target: str) -> str | None:
    """What is wrong with a reply, or None: 200 with the response message, or 4xx with a google.rpc.Status."""
    if resp.status_code >= 500:
        return f"HTTP {resp.status_code}"
    json_reply = resp.headers.get("content-type", "").startswith("application/json")
    try:
        if resp.status_code == 200:
            if json_reply:
                json_format.Parse(resp.content, RESPONSES[target](), ignore_unknown_fields=True)
            else:
                RESPONSES[target].FromString(resp.content)
            return None
        if json_reply:
            status = json_format.Parse(resp.content, status_pb2.Status(), ignore_unknown_fields=True)
        else:
            status = status_pb2.Status.FromString(resp.content)
    except Exception as exc:
        return f"HTTP {resp.status_code} with a body that does not parse: {exc}"
    if not 400 <= resp.status_code < 500 or status.code in (0, 2, 13) or not status.message:
        return f"HTTP {resp.status_code} status {status.code} {status.message!r}"
    return None


class Sender:
    """HTTP and gRPC clients of one receiver, usable from several threads (a session per thread)."""

    def __init__(self, receiver: Any) -> None:
        self.base = receiver.http_address
        self.statuses: collections.Counter[int] = collections.Counter()
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self.channel = grpc.insecure_channel(receiver.grpc_address)
        self.grpc = {s: self.channel.unary_unary(p, request_serializer=None, response_deserializer=None)
                     for s, p in GRPC_EXPORT.items()}  # fmt: skip

    def http_problem(self, target: str, fmt: str, body: bytes, gzipped: bool) -> str | None:
        headers = {"Content-Type": "application/json" if fmt == "json" else "application/x-protobuf"}
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            self._sessions.append(session)
        resp = session.post(f"{self.base}/v1/{target}", data=body, headers=headers, timeout=30)
        self.statuses[resp.status_code] += 1  # Counter += is not atomic, but a miscount here changes nothing
        return problem_with_http_reply(resp, target)

    def grpc_problem(self, signal: str, body: bytes) -> str | None:
        try:
            RESPONSES[signal].FromString(self.grpc[signal](body, timeout=30))
        except grpc.RpcError as err:
            if err.code() not in CLIENT_CODES or not err.details():
                return f"gRPC {err.code()} {err.details()!r}"
        return None

    def close(self) -> None:
        for session in self._sessions:
            session.close()
        self.channel.close()


def parse_corpus_name(path: Path) -> tuple[str, str, bool]:
    """``<target>--<what>.<pb|json>[.gz]`` → (target, fmt, gzipped)."""
    target = path.name.split("--", 1)[0]
    suffixes = path.name.split(".")
    gzipped = suffixes[-1] == "gz"
    fmt = {"pb": "protobuf", "json": "json"}[suffixes[-2] if gzipped else suffixes[-1]]
    return target, fmt, gzipped


def assert_still_ingests(receiver: Any, sender: Sender) -> None:
    """A valid request of each signal afterwards is stored with the right rows."""
    rnd = random.Random(SEED + 1)
    traces, logs, metrics = trace_seed(rnd), log_seed(rnd), metric_seed(rnd)
    for span in traces.resource_spans[0].scope_spans[0].spans:
        span.name = "after-" + span.name
    for record in logs.resource_logs[0].scope_logs[0].log_records:
        record.severity_text = "AFTER"
    for metric in metrics.resource_metrics[0].scope_metrics[0].metrics:
        metric.name = "after." + metric.name
    for signal, message in (("traces", traces), ("logs", logs), ("metrics", metrics)):
        assert sender.http_problem(signal, "protobuf", message.SerializeToString(), False) is None
    assert rows(receiver, "SELECT count(*) FROM spans WHERE starts_with(name, 'after-')") == [(7,)]
    assert rows(receiver, "SELECT count(*) FROM logs WHERE severity_text = 'AFTER'") == [(5,)]
    assert rows(
        receiver, "SELECT metric_name, type FROM metric_points WHERE starts_with(metric_name, 'after.') ORDER BY 1"
    ) == [
        ("after.expo", "exponential_histogram"),
        ("after.g", "gauge"),
        ("after.gen_ai.client.operation.duration", "histogram"),
        ("after.gen_ai.client.token.usage", "sum"),
        ("after.summary", "summary"),
    ]


def assert_log_is_short(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        if record.name.startswith("otel_agent"):
            assert record.exc_info is None, record.getMessage()
            assert len(record.getMessage()) <= 300, record.getMessage()[:500]
            assert "\n" not in record.getMessage(), record.getMessage()[:500]


@pytest.fixture
def fuzz_receiver(make_receiver: Any, caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level("INFO", logger="otel_agent")
    return make_receiver()


def test_corpus_of_past_failures(fuzz_receiver, caplog):
    """Every file of fuzz_corpus/ over HTTP, protobuf OTLP ones over gRPC too, into one receiver."""
    files = sorted(path for path in CORPUS.iterdir() if path.name != "README.md")
    assert len(files) >= 30
    sender = Sender(fuzz_receiver)
    try:
        problems = []
        for path in files:
            target, fmt, gzipped = parse_corpus_name(path)
            body = path.read_bytes()
            problem = sender.http_problem(target, fmt, body, gzipped)
            if problem is None and target in GRPC_EXPORT and fmt == "protobuf":
                problem = sender.grpc_problem(target, gzip.decompress(body) if gzipped else body)
            if problem is not None:
                problems.append(f"{path.name}: {problem}")
        assert not problems, "\n".join(problems)
        assert sender.statuses[500] == 0, sender.statuses
        assert sender.statuses[400] >= 25, sender.statuses
        assert_log_is_short(caplog)
        assert_still_ingests(fuzz_receiver, sender)
    finally:
        sender.close()


def run_case(sender: Sender, seeds: dict[str, Any], case_seed: int, out: Path) -> str | None:
    """Build case ``case_seed``, send it; what went wrong (its body saved under ``out``), or None."""
    case = random.Random(case_seed)
    target, fmt, body = make_case(case, seeds)
    gzipped = case.random() < 0.3
    wire = gzip.compress(body, compresslevel=1) if gzipped else body
    if gzipped and case.random() < 0.1:
        wire = mutate_bytes(case, wire)
    problem = sender.http_problem(target, fmt, wire, gzipped)
    if problem is None and target in GRPC_EXPORT and fmt == "protobuf" and case.random() < 0.25:
        problem = sender.grpc_problem(target, body)
    if problem is None:
        return None
    name = f"{target}--seed-{case_seed}.{'pb' if fmt == 'protobuf' else 'json'}{'.gz' if gzipped else ''}"
    (out / name).write_bytes(wire)
    return f"{problem}: {out / name}"


def test_mutated_requests_never_get_an_internal_error(fuzz_receiver, caplog, tmp_path):
    rnd = random.Random(SEED)
    seeds = {signal: build(random.Random(SEED)) for signal, build in SEEDS.items()}
    sender = Sender(fuzz_receiver)
    failures: list[str] = []
    found = tmp_path / "failures"
    found.mkdir()
    deadline = time.monotonic() + BUDGET_S
    # a few requests in flight: under load most of a request's time is waiting for a CPU, not working
    pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="fuzz")
    try:
        pending: collections.deque[concurrent.futures.Future[str | None]] = collections.deque()
        while time.monotonic() < deadline and len(failures) < 10:
            pending.append(pool.submit(run_case, sender, seeds, rnd.getrandbits(32), found))
            if len(pending) >= 8:
                problem = pending.popleft().result()
                if problem is not None:
                    failures.append(problem)
        failures += [p for p in (f.result() for f in pending) if p is not None]
        assert not failures, "\n".join(failures)
        # a run too short, or mutations that never get past the parser, would prove nothing: fail, not pass
        statuses = sender.statuses
        sent = sum(statuses.values())
        print(f"fuzz seed {SEED}: {sent} HTTP requests in {BUDGET_S:.0f} s, replies {dict(sorted(statuses.items()))}")
        assert sent > 200, statuses
        assert statuses[200] > sent / 5, statuses
        assert statuses[400] > sent / 5, statuses
        assert_log_is_short(caplog)
        assert_still_ingests(fuzz_receiver, sender)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        sender.close()
