"""The Rust traces fold (otel_agent/fold/native.py, native/) against the Python fold: the same requests through
both, the same tables (schema and every value), the same error for every request the Python fold refuses.

The requests: the benchmark's agent spans (with and without evidence records), the spans of the research
scenario (every record kind, retrieval documents), third-party shapes (older GenAI names, OpenInference) as the
SDK's own encoder writes them, hand-built hostile values (the depth limit, bad UTF-8, non-finite doubles, bytes,
duplicate keys, huge values, non-canonical wire forms) and a few thousand mutations of the fuzz test's seed
request (protobuf and OTLP/JSON), with the default redaction rules and with none. The native fold must also
answer — not hand everything to the Python fold — for the requests it is for.
"""

from __future__ import annotations

import math
import random
import shutil
import struct
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold import native
from otel_agent.fold.decode import JSON, PROTOBUF, decode_payload
from otel_agent.fold.redact import Action, Redactor, Rule, load_rules
from tests.otlp_builders import T0, kvs, span_request
from tests.server.test_fuzz import mutate_bytes, mutate_json, mutate_message, otlp_json, trace_seed
from tests.server.test_malformed import field, nested_value, varint
from tests.tools import missing_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from agent_spans import make_request

# Skipped only where the extension cannot be built (no cargo; in CI a failure: tests/tools.py): where cargo is on
# PATH, `pip install` builds it, and a build that failed silently (the extension is optional) must fail these
# tests, not skip them.
if not native.available() and shutil.which("cargo") is None:
    missing_tool("cargo", "no cargo on PATH: otel_agent._native not built")

REDACTORS = {
    "default": Redactor(load_rules(None)),
    "none": Redactor(()),
    "hash": Redactor((Rule("tool", Action.HASH),)),
}


def outcome(monkeypatch: pytest.MonkeyPatch, fmt: str, payload: bytes, redactor: Redactor, mode: str) -> Any:
    """The batch (or the error) of ``decode_payload`` with the native fold on or off."""
    monkeypatch.setenv(native.NATIVE_FOLD_ENV, mode)
    try:
        return decode_payload("traces", fmt, payload, redactor, "principal", 1_764_000_000_000_000)
    except Exception as exc:  # compared below: the same type and message on both paths
        return exc


def same_tables(a: pa.Table, b: pa.Table) -> bool:
    # NaN scores (documents) are unequal to themselves in Table.equals: then compare the values' reprs
    return a.schema == b.schema and (a.equals(b) or repr(a.to_pylist()) == repr(b.to_pylist()))


def assert_same(monkeypatch: pytest.MonkeyPatch, fmt: str, payload: bytes, redactor: Redactor) -> bool:
    """Both paths agree on ``payload``; returns whether the native fold answered for it itself."""
    python = outcome(monkeypatch, fmt, payload, redactor, "off")
    fast = outcome(monkeypatch, fmt, payload, redactor, "on")
    if isinstance(python, Exception):
        assert type(fast) is type(python)
        assert str(fast) == str(python)
    else:
        assert not isinstance(fast, Exception), fast
        assert (fast.items, fast.rejected, fast.error_message, fast.payload_bytes) == (
            python.items,
            python.rejected,
            python.error_message,
            python.payload_bytes,
        )
        assert fast.tables.keys() == python.tables.keys()
        for name, table in python.tables.items():
            assert same_tables(fast.tables[name], table), name
    protobuf = payload if fmt == PROTOBUF else None
    return protobuf is not None and native.fold_traces_native(protobuf, redactor, None, 0) is not None


@pytest.fixture
def both(monkeypatch: pytest.MonkeyPatch):
    def check(payload: bytes, fmt: str = PROTOBUF, redactor: str = "default") -> bool:
        return assert_same(monkeypatch, fmt, payload, REDACTORS[redactor])

    return check


def test_benchmark_spans_with_and_without_records(both):
    for lineage in (False, True):
        payload = make_request(300, T0, 11, lineage=lineage)
        assert both(payload), "the native fold must answer for the benchmark's requests"
        assert both(payload, redactor="none")


def third_party_spans() -> list[Any]:
    """Spans as other instrumentations write them (older GenAI names, OpenInference, OpenLLMetry), through the
    SDK, so the SDK's encoder writes their bytes."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openinference.instrumentation.langchain", "0.1.50")
    legacy = {
        "gen_ai.system": "OpenAI", "gen_ai.request.model": "gpt-4-0613", "gen_ai.usage.prompt_tokens": 100,
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "hi\n\"there\"", "llm.is_streaming": False,
    }  # fmt: skip
    retriever = {
        "openinference.span.kind": "RETRIEVER", "input.value": "q",
        "retrieval.documents.0.document.id": "d0", "retrieval.documents.0.document.score": 0.75,
        "retrieval.documents.0.document.content": "text é", "retrieval.documents.1.document.metadata":
        '{"url": "https://x", "title": "T"}', "llm.token_count.prompt": 12, "tags": ("a", "b"),
    }  # fmt: skip
    with (
        tracer.start_as_current_span("legacy_chat", attributes=legacy),
        tracer.start_as_current_span("retrieve", attributes=retriever) as span,
    ):
        span.add_event("exception", {"exception.type": "ValueError", "exception.escaped": True})
    provider.shutdown()
    return list(exporter.get_finished_spans())


def test_research_scenario_and_third_party_shapes(both):
    from tests.derived_evidence.scenario import record_research

    requests = [encode_spans(record_research().spans), encode_spans(third_party_spans())]
    for request in requests:
        payload = request.SerializeToString()
        assert both(payload)
        both(payload, redactor="hash")  # a hashed key: the Python fold answers
    # the research scenario has every record kind and retrieval documents: rows in the lookup tables
    for request, table in ((requests[0], "lineage_keys"), (requests[1], "parsed_retrieval_documents")):
        batch = native.fold_traces_native(request.SerializeToString(), REDACTORS["default"], None, 0)
        assert batch is not None
        assert batch.tables[table].num_rows > 0


def value_span(value: bytes, key: bytes = b"k") -> bytes:
    """A request of one span whose attribute ``key`` holds the serialized AnyValue ``value``."""
    span = (
        field(1, b"\x01" * 16)
        + field(2, b"\x02" * 8)
        + field(5, b"s")
        + b"\x39"  # start_time_unix_nano, fixed64
        + struct.pack("<Q", T0)
        + b"\x41"  # end_time_unix_nano
        + struct.pack("<Q", T0 + 5)
        + field(9, field(1, key) + field(2, value))
    )
    return field(1, field(2, field(2, span)))


def string(text: bytes) -> bytes:
    return field(1, text)


HOSTILE_VALUES = {
    "deepest array": nested_value(24),
    "one past the limit": nested_value(25),
    "deepest kvlist": nested_value(24, "kvlist"),
    "kvlist past the limit": nested_value(25, "kvlist"),
    "bad UTF-8": string(b"\xff\xfe"),
    "surrogate in UTF-8": string(b"\xed\xa0\x80"),
    "bad UTF-8 in an array": field(5, field(1, string(b"a\xc0"))),
    "long string": string('é漢🙂\x00\x1f"\\'.encode() * 4000),
    "control characters": string(bytes(range(32)) + b"\x7f"),
    "NaN": b"\x21" + struct.pack("<d", math.nan),
    "-inf": b"\x21" + struct.pack("<d", -math.inf),
    "-0.0": b"\x21" + struct.pack("<d", -0.0),
    "bytes": field(7, b"\x00\xff" * 100),
    "empty bytes": field(7, b""),
    "empty value": b"",
    "negative int": b"\x18" + varint(2**64 - 5),
    "int of 11 bytes": b"\x18" + b"\xff" * 10 + b"\x01",
    "bool 5": b"\x10\x05",
    "two fields": string(b"a") + b"\x18\x01",
    "string twice": string(b"a") + string(b"b"),
    "strindex": b"\x40\x07",
    "unknown field": b"\x48\x01",
    "truncated": b"\x0a\x05ab",
    "group wire type": b"\x0b\x0c",
    "ambiguous kvlist": field(6, field(1, field(1, b"bytesValue") + field(2, string(b"x")))),
    "duplicate nested keys": field(6, field(1, field(1, b"a") + field(2, b"\x18\x01")) + field(1, field(1, b"a"))),
    "kvlist entry without value": field(6, field(1, field(1, b"a"))),
    "double value in kvlist": field(6, field(1, field(1, b"a") + field(2, b"\x21" + struct.pack("<d", 1e300)))),
}


LEFT_TO_PYTHON = {"one past the limit", "kvlist past the limit", "bad UTF-8", "surrogate in UTF-8",
                  "bad UTF-8 in an array", "int of 11 bytes", "two fields", "string twice", "strindex",
                  "unknown field", "truncated", "group wire type"}  # fmt: skip


@pytest.mark.parametrize("case", list(HOSTILE_VALUES))
def test_hostile_values(both, case):
    payload = value_span(HOSTILE_VALUES[case])
    assert both(payload) is (case not in LEFT_TO_PYTHON)
    both(payload, redactor="none")


def test_hostile_keys_and_structure(both):
    dup = field(9, field(1, b"k") + field(2, string(b"first"))) + field(9, field(1, b"k") + field(2, string(b"last")))
    base = field(1, b"\x01" * 16) + field(2, b"\x02" * 8) + field(5, b"s")
    cases = [
        value_span(string(b"v"), key=b"\xff"),  # a key of bad UTF-8
        value_span(string(b"v"), key=b"api_key"),  # dropped by the default rules
        field(1, field(2, field(2, base + dup))),  # a key twice: the last wins
        field(1, field(2, field(2, base + field(15, b"\x18\x02") + field(15, b"\x12\x01m")))),  # status twice
        field(1, field(2, field(2, base + b"\x30" + varint(2**64 - 1)))),  # kind -1
        field(1, field(2, field(2, base + field(99, b"unknown")))),  # an unknown span field
        field(1, field(2, field(2, field(1, b"\x00" * 16) + field(2, b"\x02" * 8)))),  # all-zero trace id
        field(1, field(2, field(2, field(1, b"\x01" * 15) + field(2, b"\x02" * 8)))),  # 15-byte trace id
        field(1, field(2, field(2, base + b"\x39" + struct.pack("<Q", 2**63)))),  # beyond TIMESTAMP_NS
        field(1, field(2, field(2, base + field(11, b"\x09" + struct.pack("<Q", 2**64 - 1))))),  # event time
        field(1, field(2, field(2, base + field(13, field(1, b"\x01" * 3))))),  # a link id of 3 bytes
        field(1, field(1, field(1, field(1, b"service.name") + field(2, nested_value(25))))),  # resource too deep
        field(1, field(1, b"\xff\xff") + field(2, field(2, base))),  # a garbage resource
        field(1, field(2, field(1, field(1, b"openinference.x")) + field(2, base))),  # OpenInference scope
        field(1, b""),  # an empty ResourceSpans
        b"",  # an empty request
    ]
    for payload in cases:
        both(payload)
        both(payload, redactor="none")


def test_duplicate_keys_and_odd_values_are_folded_natively(both):
    request = span_request([{"attributes": {"a": 1, "b": [1.5, "x", b"\x00", {"doubleValue": 1}], "n": math.nan}}])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    span.attributes.extend(kvs({"a": "again"}))
    assert both(request.SerializeToString())


def test_mutated_requests(both):
    rnd = random.Random(20261202)
    seed = trace_seed(rnd)
    answered = 0
    for i in range(600):
        message = mutate_message(rnd, seed) if i % 5 else seed
        redactor = "default" if i % 2 else "none"
        if i % 3 == 0:
            body = mutate_json(rnd, otlp_json(message))
            both(body, JSON, redactor)
        else:
            data = message.SerializeToString()
            body = mutate_bytes(rnd, data) if i % 3 == 1 else data
            answered += both(body, PROTOBUF, redactor)
    assert answered > 100, answered  # the native fold answers for most of the valid ones


def test_json_requests(both):
    from google.protobuf import json_format

    message = ExportTraceServiceRequest()
    message.ParseFromString(make_request(50, T0, 3, lineage=True))
    body = json_format.MessageToJson(message).encode()
    both(body, JSON)


def test_forced_off_uses_the_python_fold(monkeypatch):
    payload = make_request(5, T0, 1)
    monkeypatch.setenv(native.NATIVE_FOLD_ENV, "off")
    assert not native.enabled()
    monkeypatch.setenv(native.NATIVE_FOLD_ENV, "on")
    assert native.enabled()
    with pytest.raises(InvalidPayloadError):
        decode_payload("traces", PROTOBUF, payload[:-3], REDACTORS["default"], None, 0)
