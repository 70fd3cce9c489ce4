"""Garbage sent to the receiver's own API (gRPC QueryService / ReviewService, POST /v1/query, /v1/review,
/v1/writer_trust) is INVALID_ARGUMENT / 400 with one short log line, never INTERNAL / 500 with a traceback
(issue 11, item 4). A corpus of past failures plus seeded mutations of valid requests, on a real receiver."""

from __future__ import annotations

import logging
import random

import grpc
import pytest
import requests
from google.protobuf import json_format
from google.rpc import status_pb2

from otel_agent.api.v1 import query_pb2, review_pb2
from tests.conftest import rows

QUERY = "/otel_agent.api.v1.QueryService/Query"
REVIEW = "/otel_agent.api.v1.ReviewService/Review"
TRUST = "/otel_agent.api.v1.ReviewService/SetWriterTrust"
GRPC_TO_HTTP = {QUERY: "/v1/query", REVIEW: "/v1/review", TRUST: "/v1/writer_trust"}
VALID = {
    QUERY: query_pb2.QueryRequest(sql="SELECT 1 AS one", max_rows=5, params=[]),
    REVIEW: review_pb2.ReviewRequest(target_kind="claim", target_id="c1", decision="approve", reviewer="alice"),
    TRUST: review_pb2.WriterTrustRequest(principal="p", service_name="s", trusted=True, changed_by="alice"),
}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deep_value(depth: int) -> bytes:
    """A google.protobuf.Value of lists nested ``depth`` deep (hand-encoded: protobuf refuses to build one)."""
    value = _field(3, b"x")
    for _ in range(depth):
        value = _field(6, _field(1, value))
    return value


# Past failures and known-hostile bodies, kept as regression cases: (method, protobuf body).
PROTOBUF_CORPUS = [
    (QUERY, b"\xff\xff\xff"),
    (QUERY, b"\x0a\x02\xff\xfe"),  # sql with invalid UTF-8
    (QUERY, b"\x12" + b"\x32\x02" * 3),  # params: corrupt wire format
    (QUERY, _field(1, b"SELECT ?") + _field(2, _deep_value(300))),  # params nested past protobuf's limit
    (QUERY, b"\x0a\xff\xff\xff\xff\x0f"),  # a length beyond the body
    (QUERY, b"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),  # an over-long varint
    (REVIEW, b"\x0a\x03\xc3\x28\x41"),  # target_kind with invalid UTF-8
    (REVIEW, b"\x07"),
    (TRUST, b"\x18\x02\x22"),
    (TRUST, b"\x0a"),
]
# (method, protobuf-JSON body)
JSON_CORPUS = [
    (QUERY, b"{not json"),
    (QUERY, b"[1]"),
    (QUERY, b'"a string"'),
    (QUERY, b"\xff\xfe"),
    (QUERY, b'{"maxRows": 1e400}'),
    (QUERY, b'{"maxRows": -1}'),
    (QUERY, b'{"timeoutMs": "NaN"}'),
    (QUERY, b'{"sql": 12}'),
    (QUERY, b'{"params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),  # nested 100 k deep
    (QUERY, b'{"params": [' + b'{"a":' * 1000 + b"1" + b"}" * 1000 + b"]}"),
    (QUERY, b'{"sql": "\\ud800"}'),  # a lone surrogate
    (REVIEW, b'{"reviewer": "\\udfff"}'),
    (REVIEW, b'{"targetKind": ["claim"]}'),
    (TRUST, b'{"trusted": "maybe"}'),
    (TRUST, b'{"principal": {"a": 1}}'),
]


def mutations(body: bytes, n: int, seed: int) -> list[bytes]:
    """Seeded mutations of a valid body: flipped bytes, truncations, inserted and duplicated slices."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        data = bytearray(body)
        for _ in range(rng.randint(1, 4)):
            op = rng.randrange(4)
            if op == 0 and data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif op == 1 and data:
                del data[rng.randrange(len(data)) :]
            elif op == 2:
                pos = rng.randrange(len(data) + 1)
                data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
            elif data:
                start = rng.randrange(len(data))
                data[start:start] = data[start : start + rng.randint(1, 8)]
        out.append(bytes(data))
    return out


def grpc_call(channel: grpc.Channel, method: str, body: bytes) -> grpc.StatusCode:
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        call(body, timeout=10)
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


def assert_short_log(caplog: pytest.LogCaptureFixture) -> None:
    """Exactly one short line from the receiver for the refusal, without a traceback."""
    records = [r for r in caplog.records if r.name.startswith("otel_agent") and r.levelno >= logging.INFO]
    assert len(records) == 1, [r.getMessage() for r in records]
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert "Traceback" not in record.getMessage()
    message = records[0].getMessage()
    assert len(message) < 400, message
    assert "\n" not in message, message


def assert_still_serving(receiver) -> None:
    resp = requests.post(receiver.http_address + "/v1/query", json={"sql": "SELECT 42 AS x"}, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["rows"] == [{"values": [42]}]
    assert rows(receiver, "SELECT count(*) FROM reviews") == [(0,)]
    assert rows(receiver, "SELECT count(*) FROM trusted_writers") == [(0,)]


def test_grpc_corpus_is_invalid_argument(receiver, caplog):
    caplog.set_level(logging.INFO)
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        for method, body in PROTOBUF_CORPUS:
            caplog.clear()
            assert grpc_call(channel, method, body) == grpc.StatusCode.INVALID_ARGUMENT, (method, body[:40])
            assert_short_log(caplog)
    assert_still_serving(receiver)


@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_http_corpus_is_400(receiver, caplog, fmt):
    caplog.set_level(logging.INFO)
    corpus = PROTOBUF_CORPUS if fmt == "protobuf" else JSON_CORPUS
    content_type = "application/x-protobuf" if fmt == "protobuf" else "application/json"
    for method, body in corpus:
        caplog.clear()
        resp = requests.post(
            receiver.http_address + GRPC_TO_HTTP[method], data=body, headers={"Content-Type": content_type}, timeout=10
        )
        assert resp.status_code == 400, (method, body[:40], resp.text[:200])
        if fmt == "json":
            status = resp.json()
        else:
            message = status_pb2.Status.FromString(resp.content)
            status = {"code": message.code, "message": message.message}
        assert status["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
        assert status["message"].startswith("invalid "), status
        assert len(status["message"]) < 300
        assert_short_log(caplog)
    assert_still_serving(receiver)


def test_seeded_mutations_never_internal(receiver, caplog):
    """~1200 mutated bodies over both transports: each is answered, none with INTERNAL / 500 or a traceback."""
    caplog.set_level(logging.INFO)
    seen_grpc: set[grpc.StatusCode] = set()
    seen_http: set[int] = set()
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        for seed, (method, message) in enumerate(VALID.items()):
            body = message.SerializeToString()
            for mutated in mutations(body, 200, seed):
                code = grpc_call(channel, method, mutated)
                assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), (method, mutated)
                seen_grpc.add(code)
            text = json_format.MessageToJson(message).encode()
            for fmt, bodies in (
                ("application/x-protobuf", mutations(body, 100, seed + 10)),
                ("application/json", mutations(text, 100, seed + 20)),
            ):
                for mutated in bodies:
                    resp = requests.post(
                        receiver.http_address + GRPC_TO_HTTP[method],
                        data=mutated,
                        headers={"Content-Type": fmt},
                        timeout=10,
                    )
                    assert resp.status_code < 500, (method, mutated, resp.text[:200])
                    seen_http.add(resp.status_code)
    # The mutations reached the parser's refusal (and some stayed valid requests answered on their merits).
    assert grpc.StatusCode.INVALID_ARGUMENT in seen_grpc
    assert 400 in seen_http
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert "Traceback" not in record.getMessage(), record.getMessage()
    assert_still_serving_after_mutations(receiver)


def assert_still_serving_after_mutations(receiver) -> None:
    resp = requests.post(receiver.http_address + "/v1/query", json={"sql": "SELECT 42 AS x"}, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["rows"] == [{"values": [42]}]
    health = requests.get(receiver.http_address + "/healthz", timeout=10)
    assert health.status_code == 200
    assert health.json()["status"] == "ready"
