"""Bad input gets the exact status, stores nothing from that request, and the server stays healthy."""

from __future__ import annotations

import gzip
import json
import os

import grpc
import pytest
import requests
from google.rpc import status_pb2

from tests.conftest import rows
from tests.otlp_builders import span_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def post(receiver, body: bytes, content_type: str = "application/x-protobuf", path: str = "/v1/traces", **headers):
    return requests.post(
        receiver.http_address + path, data=body, headers={"Content-Type": content_type, **headers}, timeout=30
    )


def grpc_export(receiver, body: bytes):
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        return call(body, timeout=10)


def assert_healthy_and_empty(receiver) -> None:
    health = requests.get(receiver.http_address + "/healthz", timeout=5)
    assert health.status_code == 200 and health.json()["status"] == "ready"
    assert rows(receiver, "SELECT count(*) FROM spans") == [(0,)]
    good = span_request([{"name": "after"}]).SerializeToString()
    assert post(receiver, good).status_code == 200
    assert rows(receiver, "SELECT name FROM spans") == [("after",)]


def status_of(resp) -> status_pb2.Status:
    if resp.headers["content-type"].startswith("application/json"):
        doc = resp.json()
        return status_pb2.Status(code=doc.get("code", 0), message=doc.get("message", ""))
    return status_pb2.Status.FromString(resp.content)


VALID = span_request([{"name": "ok"}]).SerializeToString()


@pytest.mark.parametrize(
    ("case", "body", "content_type", "headers", "expected"),
    [
        ("truncated protobuf", VALID[: len(VALID) // 2], "application/x-protobuf", {}, 400),
        ("invalid json", b'{"resourceSpans": [', "application/json", {}, 400),
        ("json not an object", b"[1, 2]", "application/json", {}, 400),
        (
            "non-hex trace id",
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}).encode(),
            "application/json",
            {},
            400,
        ),
        ("wrong content type", VALID, "text/plain", {}, 415),
        ("unknown content encoding", VALID, "application/x-protobuf", {"Content-Encoding": "br"}, 415),
        ("broken gzip", b"\x1f\x8bnot gzip at all", "application/x-protobuf", {"Content-Encoding": "gzip"}, 400),
    ],  # fmt: skip
)
def test_http_bad_payloads(receiver, case, body, content_type, headers, expected):
    resp = post(receiver, body, content_type, **headers)
    assert resp.status_code == expected, (case, resp.text)
    status = status_of(resp)
    assert status.code == 3 and status.message  # INVALID_ARGUMENT, with a reason
    assert_healthy_and_empty(receiver)


@pytest.mark.parametrize(
    ("case", "spans", "fragment"),
    [
        ("trace id of 15 bytes", [{"trace_id": os.urandom(15)}], "trace_id must be 16 bytes"),
        ("span id of 9 bytes", [{"span_id": os.urandom(9)}], "8 bytes"),
        ("all-zero trace id", [{"trace_id": bytes(16)}], "all-zero"),
        ("all-zero span id", [{"span_id": bytes(8)}], "all-zero"),
    ],
)
def test_invalid_ids_on_both_transports(receiver, case, spans, fragment):
    body = span_request(spans).SerializeToString()
    resp = post(receiver, body)
    assert resp.status_code == 400, case
    assert fragment in status_of(resp).message
    with pytest.raises(grpc.RpcError) as err:
        grpc_export(receiver, body)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in err.value.details()
    assert_healthy_and_empty(receiver)


def test_truncated_protobuf_over_grpc(receiver):
    with pytest.raises(grpc.RpcError) as err:
        grpc_export(receiver, VALID[:-3])
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_healthy_and_empty(receiver)


def test_wrong_method_and_path(receiver):
    assert requests.get(receiver.http_address + "/v1/traces", timeout=5).status_code == 405
    assert requests.put(receiver.http_address + "/v1/logs", data=b"", timeout=5).status_code == 405
    assert requests.post(receiver.http_address + "/v1/nothing", data=b"", timeout=5).status_code == 404
    assert_healthy_and_empty(receiver)


def test_oversized_and_gzip_bomb(make_receiver):
    receiver = make_receiver(max_message_bytes=64 * 1024)
    big = span_request([{"attributes": {"blob": "x" * 100_000}}]).SerializeToString()
    resp = post(receiver, big)
    assert resp.status_code == 413
    # 1 GiB of zeros compresses to ~1 MiB; only the wire size is small. It must be refused after
    # inflating at most the limit, without the receiver's memory growing by the bomb's size.
    bomb = gzip.compress(bytes(64 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 64 * 1024 * 1024 // 500
    resp = post(receiver, bomb, **{"Content-Encoding": "gzip"})
    assert resp.status_code == 413
    assert "after decompression" in status_of(resp).message
    with pytest.raises(grpc.RpcError) as err:
        grpc_export(receiver, big)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # gRPC's own max-message check
    assert_healthy_and_empty(receiver)


def test_partial_success_stores_the_valid_spans(receiver):
    body = span_request([{"name": "good1"}, {"name": "zero", "trace_id": bytes(16)}, {"name": "good2"}])
    resp = post(receiver, body.SerializeToString())
    assert resp.status_code == 200
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    answer = ExportTraceServiceResponse.FromString(resp.content)
    assert answer.partial_success.rejected_spans == 1
    assert "all-zero" in answer.partial_success.error_message
    raw = grpc_export(receiver, body.SerializeToString())
    assert ExportTraceServiceResponse.FromString(raw).partial_success.rejected_spans == 1
    assert rows(receiver, "SELECT name FROM spans ORDER BY name") == [("good1",), ("good2",)]
