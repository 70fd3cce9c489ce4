"""Bad input gets the exact status, stores nothing from that request, and the server stays healthy."""

from __future__ import annotations

import gzip
import json
import os

import grpc
import pytest
import requests
from google.rpc import status_pb2

from otel_agent.fold.anyvalue import MAX_DEPTH
from tests.conftest import rows, wait_until
from tests.otlp_builders import post_traces, span_request

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
    assert health.status_code == 200
    assert health.json()["status"] == "ready"
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
    ],
    # the same test ids in every process (the bodies hold random ids): pytest-xdist's workers must agree
    ids=lambda value: "body" if isinstance(value, bytes) else None,
)
def test_http_bad_payloads(receiver, case, body, content_type, headers, expected):
    resp = post(receiver, body, content_type, **headers)
    assert resp.status_code == expected, (case, resp.text)
    status = status_of(resp)
    assert status.code == 3
    assert status.message
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


# ---------------------------------------------------------------------------------------------------------------
# Regression cases found by mutation fuzzing (issue 11 §4): each was a 500 / INTERNAL with a traceback in the log.
# Requests are built as wire bytes where the generated classes refuse to build them (bad UTF-8, deep nesting).

LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
METRICS_EXPORT = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return bytes(out + bytes([low]))
        out.append(low | 0x80)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def nested_value(depth: int, kind: str = "array") -> bytes:
    """An AnyValue: a string inside ``depth`` arrays (AnyValue.array_value = 5, ArrayValue.values = 1) or
    key-value lists (AnyValue.kvlist_value = 6, KeyValueList.values = 1, KeyValue.key = 1 / value = 2)."""
    value = field(1, b"x")
    for _ in range(depth):
        value = field(5, field(1, value)) if kind == "array" else field(6, field(1, field(1, b"k") + field(2, value)))
    return value


def span_with_attribute(value: bytes) -> bytes:
    """An ExportTraceServiceRequest with one valid span whose attribute ``a`` holds the AnyValue bytes given."""
    request = span_request([{"name": "carrier"}])
    span = request.resource_spans[0].scope_spans[0].spans[0]
    own = span.SerializeToString() + field(9, field(1, b"a") + field(2, value))
    scope = request.resource_spans[0].scope_spans[0]
    scope.ClearField("spans")
    resource = request.resource_spans[0]
    resource.ClearField("scope_spans")
    return field(1, resource.SerializeToString() + field(2, scope.SerializeToString() + field(2, own)))


def log_with(body: bytes = b"", attribute: bytes = b"") -> bytes:
    """An ExportLogsServiceRequest with one record: body (LogRecord.body = 5) and/or attribute ``a`` (= 6)."""
    record = b"\x09" + (1_764_000_000_000_000_000).to_bytes(8, "little")  # time_unix_nano (fixed64)
    if body:
        record += field(5, body)
    if attribute:
        record += field(6, field(1, b"a") + field(2, attribute))
    return field(1, field(2, field(2, record)))


def export(receiver, path: str, body: bytes):
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        call = channel.unary_unary(path, request_serializer=None, response_deserializer=None)
        return call(body, timeout=10)


def refused_on_both_transports(receiver, signal: str, body: bytes, fragment: str) -> None:
    """HTTP 400 with a google.rpc.Status and gRPC INVALID_ARGUMENT, both naming the problem."""
    resp = post(receiver, body, path=f"/v1/{signal}")
    assert resp.status_code == 400, resp.text
    status = status_of(resp)
    assert status.code == 3, status.message
    assert fragment in status.message, status.message
    path = {"traces": TRACE_EXPORT, "logs": LOGS_EXPORT, "metrics": METRICS_EXPORT}[signal]
    with pytest.raises(grpc.RpcError) as err:
        export(receiver, path, body)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in err.value.details()


BAD_UTF8 = field(1, b"\xff\xfe-not-utf8")
DEEPEST = MAX_DEPTH
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        pytest.param(BAD_UTF8, "UTF-8", id="bad UTF-8 in a string value"),
        pytest.param(field(5, field(1, BAD_UTF8)), "UTF-8", id="bad UTF-8 inside an array"),
        pytest.param(field(5, field(1, b"\x0a\x05ab")), "invalid attribute value", id="a truncated value"),
        pytest.param(nested_value(DEEPEST + 1), TOO_DEEP, id="arrays one level too deep"),
        pytest.param(nested_value(DEEPEST + 1, "kvlist"), TOO_DEEP, id="key-value lists one level too deep"),
        pytest.param(nested_value(5000), "invalid attribute value", id="arrays 5000 deep"),
        pytest.param(nested_value(5000, "kvlist"), "invalid attribute value", id="key-value lists 5000 deep"),
    ],
)
def test_bad_span_attribute_values(receiver, value, fragment):
    refused_on_both_transports(receiver, "traces", span_with_attribute(value), fragment)
    assert_healthy_and_empty(receiver)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(log_with(body=nested_value(DEEPEST + 1)), TOO_DEEP, id="log body arrays one level too deep"),
        pytest.param(log_with(body=nested_value(DEEPEST + 1, "kvlist")), TOO_DEEP, id="log body kvlists too deep"),
        pytest.param(log_with(attribute=nested_value(DEEPEST + 1)), TOO_DEEP, id="log attribute too deep"),
        pytest.param(log_with(body=nested_value(5000)), "invalid protobuf", id="log body 5000 deep"),
        pytest.param(log_with(body=BAD_UTF8), "invalid protobuf", id="bad UTF-8 in a log body"),
    ],
)
def test_bad_log_values(receiver, body, fragment):
    refused_on_both_transports(receiver, "logs", body, fragment)
    assert rows(receiver, "SELECT count(*) FROM logs") == [(0,)]
    assert post(receiver, log_with(body=nested_value(DEEPEST)), path="/v1/logs").status_code == 200
    assert rows(receiver, "SELECT count(*) FROM logs") == [(1,)]


def json_value(depth: int, kind: str) -> dict:
    value: dict = {"stringValue": "x"}
    for _ in range(depth):
        if kind == "array":
            value = {"arrayValue": {"values": [value]}}
        else:
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def exemplar_request(depth: int, kind: str, fmt: str) -> bytes:
    """A histogram point whose exemplar's filtered attribute ``a`` nests ``depth`` levels: the deepest place an
    attribute value sits in any OTLP request."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    doc = {
        "resourceMetrics": [
            {
                "scopeMetrics": [
                    {
                        "metrics": [
                            {
                                "name": "deep",
                                "histogram": {
                                    "aggregationTemporality": 2,
                                    "dataPoints": [
                                        {
                                            "timeUnixNano": "5",
                                            "count": "1",
                                            "exemplars": [
                                                {
                                                    "asDouble": 1.0,
                                                    "filteredAttributes": [
                                                        {"key": "a", "value": json_value(depth, kind)}
                                                    ],
                                                }
                                            ],
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                ]
            }
        ]
    }
    if fmt == "json":
        return json.dumps(doc).encode()
    # the generated classes build and encode it: protobuf's depth limit applies to parsing only
    from google.protobuf import json_format

    return json_format.ParseDict(doc, ExportMetricsServiceRequest(), max_recursion_depth=1000).SerializeToString()


@pytest.mark.parametrize("kind", ["array", "kvlist"])
@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_the_depth_limit_is_the_same_everywhere(receiver, kind, fmt):
    """MAX_DEPTH levels are stored even in the deepest place, in both encodings; one more is refused by our
    limit (with its message), not by whichever parser gives up first."""
    content_type = "application/json" if fmt == "json" else "application/x-protobuf"
    resp = post(receiver, exemplar_request(DEEPEST, kind, fmt), content_type, path="/v1/metrics")
    assert resp.status_code == 200, resp.text[:300]
    ((text,),) = rows(receiver, "SELECT exemplars->0->'filtered_attributes'->>'a' FROM metric_points")
    stored = json.loads(text)
    for _ in range(DEEPEST):
        stored = stored[0] if kind == "array" else stored["k"]
    assert stored == "x"
    resp = post(receiver, exemplar_request(DEEPEST + 1, kind, fmt), content_type, path="/v1/metrics")
    assert resp.status_code == 400
    assert TOO_DEEP in status_of(resp).message
    body = log_with(body=nested_value(DEEPEST, kind)) if fmt == "protobuf" else deep_json_log(DEEPEST, kind)
    assert post(receiver, body, content_type, path="/v1/logs").status_code == 200
    assert post(receiver, span_with_attribute(nested_value(DEEPEST, kind))).status_code == 200
    stored = json.loads(rows(receiver, "SELECT attributes FROM spans")[0][0])["a"]
    for _ in range(DEEPEST):
        stored = stored[0] if kind == "array" else stored["k"]
    assert stored == "x"


def deep_json_log(depth: int, kind: str = "array") -> bytes:
    if depth > 500:  # built as text: json.dumps itself recurses
        body = '{"arrayValue":{"values":[' * depth + '{"stringValue":"x"}' + "]}}" * depth
    else:
        body = json.dumps(json_value(depth, kind))
    return json_log('{"timeUnixNano":"1","body":' + body + "}")


def json_log(record: str) -> bytes:
    return ('{"resourceLogs":[{"scopeLogs":[{"logRecords":[' + record + "]}]}]}").encode()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param(deep_json_log(DEEPEST + 1), TOO_DEEP, id="AnyValue one level too deep"),
        pytest.param(deep_json_log(300), "Message too deep", id="AnyValue 300 deep"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "invalid JSON", id="JSON 100 000 deep"),
        pytest.param(deep_json_log(100_000), "invalid JSON", id="AnyValue 100 000 deep"),
    ],
)
def test_deep_json(receiver, body, fragment):
    resp = post(receiver, body, "application/json", path="/v1/logs")
    assert resp.status_code == 400, resp.text[:300]
    assert fragment in status_of(resp).message
    assert post(receiver, deep_json_log(DEEPEST), "application/json", path="/v1/logs").status_code == 200
    assert rows(receiver, "SELECT count(*) FROM logs") == [(1,)]


TRACE_HEX, SPAN_HEX = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"


def json_span(**fields) -> bytes:
    """One OTLP/JSON span with ``fields``; a value "RAW:text:RAW" is written as the bare text (``1e400``), and
    "SURROGATE" as a lone surrogate escape."""
    span = {"traceId": TRACE_HEX, "spanId": SPAN_HEX, "name": "j", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{**span, **fields}]}]}]})
    return text.replace('"RAW:', "").replace(':RAW"', "").replace("SURROGATE", "\\ud800").encode()


def json_metric(temporality: str) -> bytes:
    sum_ = '{"aggregationTemporality":' + temporality + ',"dataPoints":[{"asInt":"1","timeUnixNano":"5"}]}'
    return ('{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","sum":' + sum_ + "}]}]}]}").encode()


def json_attribute(value: dict) -> bytes:
    return json_span(attributes=[{"key": "a", "value": value}])


@pytest.mark.parametrize(
    ("case", "path", "body"),
    [
        ("1e400 as a span kind", "/v1/traces", json_span(kind="RAW:1e400:RAW")),
        ("a lone surrogate as a span kind", "/v1/traces", json_span(kind="SURROGATE")),
        ("1e400 as a double", "/v1/traces", json_attribute({"doubleValue": "RAW:1e400:RAW"})),
        ("a lone surrogate as a double", "/v1/traces", json_attribute({"doubleValue": "\ud800"})),
        ("a lone surrogate in a string", "/v1/traces", json_attribute({"stringValue": "\udc00"})),
        ("1e400 as a temporality", "/v1/metrics", json_metric("1e400")),
        ("a lone surrogate as a severity", "/v1/logs", json_log('{"severityNumber":"\\ud800"}')),
        ("1e400 as a severity", "/v1/logs", json_log('{"severityNumber":1e400}')),
        ("a huge integer", "/v1/traces", json_span(flags="RAW:" + "9" * 5000 + ":RAW")),
        ("a fraction as an integer", "/v1/traces", json_span(flags=1.5)),
    ],
)
def test_bad_json_numbers_and_strings(receiver, case, path, body):
    resp = post(receiver, body, "application/json", path=path)
    assert resp.status_code == 400, (case, resp.text[:300])
    status = status_of(resp)
    assert status.code == 3
    assert "invalid" in status.message
    assert_healthy_and_empty(receiver)


BEYOND = 2**63  # timestamps are TIMESTAMP_NS (int64 nanoseconds): the year 2262 and later cannot be stored


def test_span_timestamps_beyond_int64_are_rejected_items(receiver):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    request = span_request([{"name": "good"}, {"name": "late", "start": BEYOND, "end": 2**64 - 1}, {"name": "ev"}])
    request.resource_spans[0].scope_spans[0].spans[2].events.add(time_unix_nano=BEYOND, name="e")
    resp = post(receiver, request.SerializeToString())
    assert resp.status_code == 200
    answer = ExportTraceServiceResponse.FromString(resp.content)
    assert answer.partial_success.rejected_spans == 2
    assert "after the year 2262" in answer.partial_success.error_message
    assert rows(receiver, "SELECT name FROM spans") == [("good",)]
    assert rows(receiver, "SELECT count(*) FROM span_events") == [(0,)]
    only_bad = span_request([{"name": "late", "end": BEYOND}]).SerializeToString()
    refused_on_both_transports(receiver, "traces", only_bad, "after the year 2262")
    json_body = json_span(startTimeUnixNano=str(2**64 - 1))
    resp = post(receiver, json_body, "application/json")
    assert resp.status_code == 400
    assert "after the year 2262" in status_of(resp).message


def test_log_timestamps_beyond_int64_are_rejected_items(receiver):
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
        ExportLogsServiceResponse,
    )

    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    records.add(time_unix_nano=1, severity_text="good")
    records.add(time_unix_nano=BEYOND, severity_text="late")
    records.add(observed_time_unix_nano=2**64 - 1, severity_text="late observed")
    resp = post(receiver, request.SerializeToString(), path="/v1/logs")
    assert resp.status_code == 200
    answer = ExportLogsServiceResponse.FromString(resp.content)
    assert answer.partial_success.rejected_log_records == 2
    assert "after the year 2262" in answer.partial_success.error_message
    assert rows(receiver, "SELECT severity_text FROM logs") == [("good",)]
    del records[0]
    refused_on_both_transports(receiver, "logs", request.SerializeToString(), "after the year 2262")


def metrics_request(temporality: int = 1, time: int = 5, start: int = 0):
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    request = ExportMetricsServiceRequest()
    metrics = request.resource_metrics.add().scope_metrics.add().metrics
    good = metrics.add(name="good")
    good.sum.aggregation_temporality = 1
    good.sum.data_points.add(as_int=1, time_unix_nano=5)
    bad = metrics.add(name="bad")
    bad.sum.aggregation_temporality = temporality
    bad.sum.data_points.add(as_int=2, time_unix_nano=time, start_time_unix_nano=start)
    bad.sum.data_points.add(as_int=3, time_unix_nano=time, start_time_unix_nano=start)
    return request


@pytest.mark.parametrize(
    ("case", "request_", "fragment"),
    [
        ("temporality -1", metrics_request(temporality=-1), "aggregation temporality -1"),
        ("temporality 3", metrics_request(temporality=3), "aggregation temporality 3"),
        ("temporality 7", metrics_request(temporality=7), "aggregation temporality 7"),
        ("time beyond int64", metrics_request(time=BEYOND), "after the year 2262"),
        ("start time beyond int64", metrics_request(start=2**64 - 1), "after the year 2262"),
    ],
)
def test_bad_metric_points_are_rejected_items(receiver, case, request_, fragment):
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse

    resp = post(receiver, request_.SerializeToString(), path="/v1/metrics")
    assert resp.status_code == 200, resp.text
    answer = ExportMetricsServiceResponse.FromString(resp.content)
    assert answer.partial_success.rejected_data_points == 2
    assert fragment in answer.partial_success.error_message
    assert rows(receiver, "SELECT metric_name, temporality, value_int FROM metric_points") == [("good", "DELTA", 1)]
    del request_.resource_metrics[0].scope_metrics[0].metrics[0]
    refused_on_both_transports(receiver, "metrics", request_.SerializeToString(), fragment)


def test_json_temporality_minus_one_is_refused_not_cumulative(receiver):
    resp = post(receiver, json_metric("-1"), "application/json", path="/v1/metrics")
    assert resp.status_code == 400
    assert "aggregation temporality -1" in status_of(resp).message
    assert rows(receiver, "SELECT count(*) FROM metric_points") == [(0,)]
    assert post(receiver, json_metric("2"), "application/json", path="/v1/metrics").status_code == 200
    assert rows(receiver, "SELECT temporality FROM metric_points") == [("CUMULATIVE",)]


def test_huge_document_index_is_not_an_error(receiver):
    """A flattened retrieval-document key with thousands of digits is just an attribute (Python's int() refuses
    more than 4300 digits: that was a 500)."""
    key = "retrieval.documents." + "9" * 5000 + ".document.id"
    body = span_request([{"name": "retrieval kb", "attributes": {key: "d1"}}]).SerializeToString()
    assert post(receiver, body).status_code == 200
    assert rows(receiver, "SELECT count(*) FROM spans") == [(1,)]
    assert rows(receiver, "SELECT count(*) FROM parsed_retrieval_documents") == [(0,)]


@pytest.mark.parametrize(
    "documents",
    [
        pytest.param('[{"id": ' + "[" * 300 + "]" * 300 + "}]", id="an id nested 300 deep"),
        pytest.param('[{"id": "d", "metadata": ' + '{"a":' * 300 + "1" + "}" * 300 + "}]", id="metadata 300 deep"),
    ],
)
def test_deep_json_text_in_documents_is_not_an_error(receiver, documents):
    """gen_ai.retrieval.documents is JSON text read at fold time: nested deeper than orjson writes back (255), it
    was a 500 (TypeError); now it is text that holds no documents, and the span is stored."""
    attributes = {"gen_ai.retrieval.documents": documents}
    body = span_request([{"name": "retrieval kb", "attributes": attributes}]).SerializeToString()
    assert post(receiver, body).status_code == 200
    assert rows(receiver, "SELECT attributes->>'gen_ai.retrieval.documents' FROM spans") == [(documents,)]
    assert rows(receiver, "SELECT count(*) FROM parsed_retrieval_documents") == [(0,)]


def test_malformed_input_logs_one_short_line(receiver, caplog):
    caplog.set_level("DEBUG", logger="otel_agent")
    bodies = [
        ("/v1/traces", span_with_attribute(BAD_UTF8), "application/x-protobuf"),
        ("/v1/logs", deep_json_log(100_000), "application/json"),
        ("/v1/metrics", metrics_request(temporality=-1).SerializeToString()[:-3], "application/x-protobuf"),
    ]
    for path, body, content_type in bodies:
        caplog.clear()
        assert post(receiver, body, content_type, path=path).status_code == 400
        records = [r for r in caplog.records if r.name.startswith("otel_agent")]
        assert len(records) == 1, [r.getMessage() for r in records]
        (record,) = records
        assert record.exc_info is None
        assert "\n" not in record.getMessage()
        assert len(record.getMessage()) <= 300
        assert path in record.getMessage()
    caplog.clear()
    with pytest.raises(grpc.RpcError):
        grpc_export(receiver, span_with_attribute(BAD_UTF8))
    (record,) = [r for r in caplog.records if r.name.startswith("otel_agent")]
    assert record.exc_info is None
    assert len(record.getMessage()) <= 300
    assert "TraceService" in record.getMessage()


def test_a_client_that_disconnects_mid_body_is_one_short_line_not_an_unexpected_error(receiver, caplog):
    """Headers promise 200 kB, 1 kB arrives, the client closes: nothing stored, the receiver logs one short
    refusal line (no traceback, no "unexpected error") and goes on serving."""
    import logging
    import socket
    import time

    caplog.set_level(logging.INFO)
    with socket.create_connection(("127.0.0.1", receiver.http_port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 200000\r\n\r\n" + b"\x0a" * 1000
        )
        # the receiver has admitted the request and reads its body when the client goes away
        wait_until(lambda: receiver.writer.inflight_bytes > 0, "the request to be admitted")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any("disconnected" in r.getMessage() for r in caplog.records):
        time.sleep(0.05)
    lines = [r for r in caplog.records if "disconnected" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    assert lines[0].exc_info is None
    assert len(lines[0].getMessage()) < 300
    assert not any("unexpected error" in r.getMessage() for r in caplog.records)
    ok = post_traces(
        f"http://127.0.0.1:{receiver.http_port}",
        span_request([{"trace_id": b"\x01" * 16, "span_id": b"\x02" * 8, "name": "after"}]),
    )
    assert ok.status_code == 200
    assert rows(receiver, "SELECT name FROM spans") == [("after",)]
