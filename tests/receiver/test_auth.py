"""Bearer-token authentication on both transports, for ingest and for the query API; the principal stored
with the rows; and the rule that a non-loopback bind needs a tokens file or an explicit --insecure."""

from __future__ import annotations

import hashlib
import json
import os

import grpc
import pytest
import requests
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

from otel_agent.api.v1 import query_pb2, query_pb2_grpc
from otel_agent.config import ReceiverConfig
from otel_agent.errors import ConfigError
from tests.conftest import config_error, rows, write_tokens_file
from tests.otlp_builders import post_traces, span_request

INGEST_TOKEN = "ingest-s3cret"
QUERY_TOKEN = "query-s3cret"
HASHED_TOKEN = "hashed-s3cret"
NO_ROLE_TOKEN = "no-role-s3cret"

TRACE_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
RESOURCE = Resource.create({"service.name": "auth-tests"})


@pytest.fixture
def tokens_file(tmp_path):
    return write_tokens_file(
        tmp_path / "tokens.json",
        {"token": INGEST_TOKEN, "principal": "research-agent", "roles": ["ingest"]},
        {"token": QUERY_TOKEN, "principal": "analyst", "roles": ["query"]},
        {
            # Upper-case hex on purpose: the file's digest is compared case-insensitively.
            "token_sha256": hashlib.sha256(HASHED_TOKEN.encode()).hexdigest().upper(),
            "principal": "alice",
            "roles": ["ingest", "query", "review"],
        },
        {"token": NO_ROLE_TOKEN, "principal": "nobody", "roles": []},
    )


@pytest.fixture
def secured(make_receiver, tokens_file):
    return make_receiver(tokens_file=tokens_file)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def grpc_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


def count_all(receiver) -> dict[str, int]:
    return {
        table: rows(receiver, f"SELECT count(*) FROM {table}")[0][0]
        for table in ("spans", "span_events", "span_links", "logs", "metric_points")
    }


def http_status(resp: requests.Response) -> status_pb2.Status:
    status = status_pb2.Status()
    status.ParseFromString(resp.content)
    return status


# Each refusal case: the header value sent (None: no header), HTTP status, gRPC code, message fragment.
INGEST_REFUSALS = [
    pytest.param(None, 401, grpc.StatusCode.UNAUTHENTICATED, "missing bearer token", id="no-token"),
    pytest.param("Bearer wrong", 401, grpc.StatusCode.UNAUTHENTICATED, "unknown bearer token", id="bad-token"),
    pytest.param(f"Basic {INGEST_TOKEN}", 401, grpc.StatusCode.UNAUTHENTICATED, "Bearer", id="not-bearer"),
    pytest.param("Bearer ", 401, grpc.StatusCode.UNAUTHENTICATED, "Bearer", id="empty-token"),
    pytest.param(f"Bearer {QUERY_TOKEN}", 403, grpc.StatusCode.PERMISSION_DENIED, "'ingest'", id="query-role-only"),
    pytest.param(f"Bearer {NO_ROLE_TOKEN}", 403, grpc.StatusCode.PERMISSION_DENIED, "'ingest'", id="no-roles"),
]


@pytest.mark.parametrize(("authorization", "http_code", "grpc_code", "fragment"), INGEST_REFUSALS)
def test_ingest_refused(secured, authorization, http_code, grpc_code, fragment):
    request = span_request([{"name": "refused"}])

    headers = {"Content-Type": "application/x-protobuf"}
    if authorization is not None:
        headers["Authorization"] = authorization
    resp = requests.post(
        secured.http_address + "/v1/traces", data=request.SerializeToString(), headers=headers, timeout=10
    )
    assert resp.status_code == http_code
    assert resp.headers["content-type"] == "application/x-protobuf"
    assert "retry-after" not in {k.lower() for k in resp.headers}
    status = http_status(resp)
    assert status.code == grpc_code.value[0]
    assert fragment in status.message

    with grpc.insecure_channel(secured.grpc_address) as channel:
        export = channel.unary_unary(
            TRACE_METHOD,
            request_serializer=ExportTraceServiceRequest.SerializeToString,
            response_deserializer=ExportTraceServiceResponse.FromString,
        )
        metadata = (("authorization", authorization),) if authorization is not None else ()
        with pytest.raises(grpc.RpcError) as info:
            export(request, metadata=metadata, timeout=10)
    assert info.value.code() == grpc_code
    assert fragment in info.value.details()

    assert set(count_all(secured).values()) == {0}
    assert secured.writer.stats.items == 0


def test_auth_is_checked_before_the_payload(secured):
    """A caller without a token learns nothing about the body: garbage is refused 401, not 400."""
    resp = post_traces(secured.http_address, b"\xff\xfe not protobuf")
    assert resp.status_code == 401
    with grpc.insecure_channel(secured.grpc_address) as channel:
        export = channel.unary_unary(TRACE_METHOD)
        with pytest.raises(grpc.RpcError) as info:
            export(b"\xff\xfe not protobuf", timeout=10)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_json_request_gets_json_error(secured):
    resp = requests.post(
        secured.http_address + "/v1/traces",
        data=json.dumps({"resourceSpans": []}),
        headers={"Content-Type": "application/json", **bearer(QUERY_TOKEN)},
        timeout=10,
    )
    assert resp.status_code == 403
    assert resp.headers["content-type"] == "application/json"
    doc = resp.json()
    assert doc["code"] == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert "analyst" in doc["message"]
    assert "ingest" in doc["message"]


def grpc_span_exporter(receiver, token):
    return GrpcSpanExporter(endpoint=receiver.grpc_address, insecure=True, headers=grpc_metadata(token))


def http_span_exporter(receiver, token):
    return HttpSpanExporter(endpoint=receiver.http_address + "/v1/traces", headers=bearer(token))


SPAN_EXPORTERS = {"grpc": grpc_span_exporter, "http": http_span_exporter}


def send_spans(exporter) -> list:
    """Two spans sent through a real SDK pipeline; returns the ``(trace_id, span_id)`` pairs as hex."""
    sent: list = []

    class Recording(SimpleSpanProcessor):
        def on_end(self, span):
            ctx = span.get_span_context()
            sent.append((format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")))
            super().on_end(span)

    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(Recording(exporter))
    tracer = provider.get_tracer("auth.tests")
    with (
        tracer.start_as_current_span("parent"),
        tracer.start_as_current_span("child", attributes={"gen_ai.usage.input_tokens": 7}),
    ):
        pass
    provider.shutdown()
    return sent


@pytest.mark.parametrize("transport", ["grpc", "http"])
@pytest.mark.parametrize("token", [None, "wrong", QUERY_TOKEN])
def test_sdk_exporter_refused_stores_nothing(secured, transport, token):
    """The real exporter gets a non-retryable failure (it does not retry 401/403) and nothing is stored."""
    exporter = SPAN_EXPORTERS[transport](secured, token)
    provider = TracerProvider(resource=RESOURCE)
    results: list[SpanExportResult] = []

    class Capture(SimpleSpanProcessor):
        def on_end(self, span):
            results.append(self.span_exporter.export((span,)))

    provider.add_span_processor(Capture(exporter))
    with provider.get_tracer("auth.tests").start_as_current_span("refused"):
        pass
    provider.shutdown()
    assert results == [SpanExportResult.FAILURE]
    assert set(count_all(secured).values()) == {0}


@pytest.mark.parametrize("transport", ["grpc", "http"])
@pytest.mark.parametrize(
    ("token", "principal"), [(INGEST_TOKEN, "research-agent"), (HASHED_TOKEN, "alice")], ids=["plain", "sha256"]
)
def test_valid_token_stores_rows_with_principal(secured, transport, token, principal):
    sent = send_spans(SPAN_EXPORTERS[transport](secured, token))
    stored = rows(secured, "SELECT trace_id, span_id, principal FROM spans ORDER BY name")
    assert sorted(stored) == sorted((t, s, principal) for t, s in sent)
    assert len(stored) == 2
    (child,) = rows(secured, "SELECT (attributes->>'gen_ai.usage.input_tokens')::INT FROM spans WHERE name='child'")
    assert child == (7,)


@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_logs_and_metrics_carry_principal(secured, transport):
    if transport == "grpc":
        log_exporter = GrpcLogExporter(
            endpoint=secured.grpc_address, insecure=True, headers=grpc_metadata(INGEST_TOKEN)
        )
        metric_exporter = GrpcMetricExporter(
            endpoint=secured.grpc_address, insecure=True, headers=grpc_metadata(HASHED_TOKEN)
        )
    else:
        log_exporter = HttpLogExporter(endpoint=secured.http_address + "/v1/logs", headers=bearer(INGEST_TOKEN))
        metric_exporter = HttpMetricExporter(
            endpoint=secured.http_address + "/v1/metrics", headers=bearer(HASHED_TOKEN)
        )

    logs = LoggerProvider(resource=RESOURCE)
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logs.get_logger("auth.tests").emit(body="tool call finished", attributes={"otel_agent.run.id": "r1"})
    logs.shutdown()

    reader = InMemoryMetricReader()
    meters = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    meters.get_meter("auth.tests").create_counter("calls").add(3, {"tool": "search"})
    assert metric_exporter.export(reader.get_metrics_data()).name == "SUCCESS"
    meters.shutdown()

    assert rows(secured, "SELECT body, attributes->>'otel_agent.run.id', principal FROM logs") == [
        ('"tool call finished"', "r1", "research-agent")
    ]
    assert rows(secured, "SELECT metric_name, value_int, principal FROM metric_points") == [("calls", 3, "alice")]


def test_without_tokens_file_principal_is_null(receiver):
    send_spans(GrpcSpanExporter(endpoint=receiver.grpc_address, insecure=True))
    assert rows(receiver, "SELECT count(*), count(principal) FROM spans") == [(2, 0)]


# --- the query API --------------------------------------------------------------------------------------

QUERY_REFUSALS = [
    pytest.param(None, 401, grpc.StatusCode.UNAUTHENTICATED, id="no-token"),
    pytest.param("wrong", 401, grpc.StatusCode.UNAUTHENTICATED, id="bad-token"),
    pytest.param(INGEST_TOKEN, 403, grpc.StatusCode.PERMISSION_DENIED, id="ingest-role-only"),
    pytest.param(NO_ROLE_TOKEN, 403, grpc.StatusCode.PERMISSION_DENIED, id="no-roles"),
]


@pytest.mark.parametrize(("token", "http_code", "grpc_code"), QUERY_REFUSALS)
def test_query_refused(secured, token, http_code, grpc_code):
    # Something to (not) read: one span written with a valid ingest token.
    send_spans(grpc_span_exporter(secured, INGEST_TOKEN))
    sql = "SELECT name, principal FROM spans"

    resp = requests.post(
        secured.http_address + "/v1/query",
        json={"sql": sql},
        headers=bearer(token),
        timeout=10,
    )
    assert resp.status_code == http_code
    doc = resp.json()
    assert doc["code"] == grpc_code.value[0]
    assert "rows" not in doc
    assert "child" not in resp.text

    with grpc.insecure_channel(secured.grpc_address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.Query(query_pb2.QueryRequest(sql=sql), metadata=grpc_metadata(token), timeout=10)
    assert info.value.code() == grpc_code


@pytest.mark.parametrize("token", [QUERY_TOKEN, HASHED_TOKEN], ids=["plain", "sha256"])
def test_query_allowed_with_query_role(secured, token):
    send_spans(http_span_exporter(secured, INGEST_TOKEN))
    sql = "SELECT name, principal FROM spans ORDER BY name"

    resp = requests.post(secured.http_address + "/v1/query", json={"sql": sql}, headers=bearer(token), timeout=10)
    assert resp.status_code == 200
    assert [r["values"] for r in resp.json()["rows"]] == [["child", "research-agent"], ["parent", "research-agent"]]

    with grpc.insecure_channel(secured.grpc_address) as channel:
        reply = query_pb2_grpc.QueryServiceStub(channel).Query(
            query_pb2.QueryRequest(sql=sql), metadata=grpc_metadata(token), timeout=10
        )
    assert [[v.string_value for v in r.values] for r in reply.rows] == [
        ["child", "research-agent"],
        ["parent", "research-agent"],
    ]


DETAILS = {"queue_depth", "inflight_bytes", "max_inflight_bytes", "commits", "items_committed", "refused"}


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {INGEST_TOKEN}"])
def test_healthz_without_a_valid_token_tells_liveness_only(secured, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    resp = requests.get(secured.http_address + "/healthz", headers=headers, timeout=10)
    assert resp.status_code == 200
    assert resp.json() == {"status": "ready"}


@pytest.mark.parametrize("token", [INGEST_TOKEN, QUERY_TOKEN, HASHED_TOKEN, NO_ROLE_TOKEN])
def test_healthz_details_need_a_valid_token_of_any_role(secured, token):
    post_traces(
        secured.http_address, span_request([{"name": "counted"}]), headers=bearer(INGEST_TOKEN)
    ).raise_for_status()
    body = requests.get(secured.http_address + "/healthz", headers=bearer(token), timeout=10).json()
    assert body["status"] == "ready"
    assert set(body) >= DETAILS
    assert body["items_committed"] == 1


def test_healthz_without_tokens_file_shows_details(receiver):
    body = requests.get(receiver.http_address + "/healthz", timeout=10).json()
    assert body["status"] == "ready"
    assert set(body) >= DETAILS


# --- tokens file and bind rules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"tokens": [{"token": "t", "principal": "p", "roles": ["admin"]}]}', "unknown roles ['admin']"),
        ('{"tokens": [{"token": "t", "roles": ["ingest"]}]}', "tokens[0]: missing field 'principal'"),
        ("not json", "cannot read tokens file"),
    ],
)
def test_bad_tokens_file_is_a_config_error(make_receiver, tmp_path, content, fragment):
    assert fragment in config_error(make_receiver, tmp_path / "bad-tokens.json", "tokens_file", content)


def test_missing_tokens_file_is_a_config_error(make_receiver, tmp_path):
    with pytest.raises(ConfigError, match="cannot read tokens file"):
        make_receiver(tokens_file=str(tmp_path / "absent.json"))


@pytest.mark.parametrize(
    "endpoints",
    [
        {"grpc_endpoint": "0.0.0.0:0"},
        {"http_endpoint": "0.0.0.0:0"},
        {"grpc_endpoint": "0.0.0.0:0", "http_endpoint": "0.0.0.0:0"},
    ],
    ids=["grpc", "http", "both"],
)
def test_non_loopback_without_tokens_file_refused(make_receiver, endpoints, tmp_path, monkeypatch):
    monkeypatch.delenv("OTEL_AGENT_TOKENS_FILE", raising=False)
    monkeypatch.delenv("OTEL_AGENT_INSECURE", raising=False)
    with pytest.raises(ConfigError) as info:
        make_receiver(first_open=True, **endpoints)  # a store the receiver would create, not a copied one
    message = str(info.value)
    assert "0.0.0.0:0 is not a loopback address" in message
    assert "--tokens-file" in message
    assert "--insecure" in message
    # Refused before anything was opened: no store, no discovery file.
    assert not any(p.name.startswith("store") for p in tmp_path.iterdir())


def test_non_loopback_refused_by_config_resolution(monkeypatch):
    monkeypatch.delenv("OTEL_AGENT_TOKENS_FILE", raising=False)
    monkeypatch.delenv("OTEL_AGENT_INSECURE", raising=False)
    with pytest.raises(ConfigError, match="not a loopback address"):
        ReceiverConfig.resolve(grpc_endpoint="10.1.2.3:4317", http_endpoint="127.0.0.1:4318")
    # Loopback spellings are fine.
    for host in ("127.0.0.1", "localhost", "[::1]", "127.0.0.2"):
        ReceiverConfig.resolve(grpc_endpoint=f"{host}:4317", http_endpoint=f"{host}:4318")


def _serves_traces(receiver, headers: dict[str, str]) -> None:
    http_port = receiver.http_port
    resp = post_traces(
        f"http://127.0.0.1:{http_port}", span_request([{"name": "open", "trace_id": os.urandom(16)}]), headers=headers
    )
    assert resp.status_code == 200
    assert requests.get(f"http://127.0.0.1:{http_port}/healthz", timeout=10).json()["status"] == "ready"


def test_non_loopback_allowed_with_insecure(make_receiver):
    receiver = make_receiver(grpc_endpoint="0.0.0.0:0", http_endpoint="0.0.0.0:0", insecure=True)
    assert receiver.grpc_address.startswith("0.0.0.0:")
    assert receiver.grpc_port > 0
    _serves_traces(receiver, {})
    assert rows(receiver, "SELECT name, principal FROM spans") == [("open", None)]
    receiver.stop()
    assert not receiver._started
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{receiver.http_port}/healthz", timeout=2)


def test_non_loopback_allowed_with_tokens_file(make_receiver, tokens_file):
    receiver = make_receiver(grpc_endpoint="0.0.0.0:0", http_endpoint="0.0.0.0:0", tokens_file=tokens_file)
    _serves_traces(receiver, bearer(INGEST_TOKEN))
    assert rows(receiver, "SELECT name, principal FROM spans") == [("open", "research-agent")]
    resp = post_traces(f"http://127.0.0.1:{receiver.http_port}", span_request([{"name": "anon"}]))
    assert resp.status_code == 401
    receiver.stop()
