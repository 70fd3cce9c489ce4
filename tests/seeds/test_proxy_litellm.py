"""Issue 15 item 7, third-party proxies: spans shaped as the LiteLLM proxy's OpenTelemetry integration writes them
(litellm/integrations/opentelemetry.py: the "Received Proxy Server Request" span carrying metadata.* of the API
key, llm.request.type = acompletion, gen_ai.system, llm.is_streaming as a string, gen_ai.cost.total_cost), sent
by the real OTel SDK over OTLP/HTTP to a real receiver, as a child of an agent's provider call (the traceparent
the client forwarded), plus a LiteLLM request with OpenLLMetry chunk events. Read back from the views and the
CLI once the receiver has stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

import otel_agent.instrument as oi
from otel_agent.server.receiver import Receiver
from tests.conftest import start_receiver
from tests.seeds.support import rows, run_cli

RUN = "run_via_litellm"


def litellm_attributes(alias: str, provider: str, model: str, stream: bool, cost: float) -> dict[str, object]:
    proxy_only = {"metadata.user_agent": "claude-cli/1.0", "metadata.requester_ip_address": "10.0.0.7"} if alias else {}
    return {
        **proxy_only,
        "metadata.user_api_key_hash": "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
        "metadata.user_api_key_alias": alias,
        "metadata.user_api_key_team_alias": "platform",
        "metadata.user_api_key_user_id": "",  # LiteLLM writes None as ""
        "hidden_params": '{"model_id": "x1", "api_base": "https://api.example", "response_cost": 0.0}',
        "gen_ai.cost.total_cost": cost,
        "gen_ai.request.model": model,
        "llm.request.type": "acompletion",
        "gen_ai.operation.name": "acompletion",
        "gen_ai.system": provider,
        "llm.is_streaming": str(stream),
        "gen_ai.response.id": "chatcmpl-1",
        "gen_ai.response.model": model,
        "gen_ai.usage.total_tokens": 130,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.input_tokens": 100,
    }


def emit(receiver: Receiver) -> None:
    agent = TracerProvider(resource=Resource.create({"service.name": "coding-agent"}))
    proxy = TracerProvider(resource=Resource.create({"service.name": "litellm-proxy"}))
    for p in (agent, proxy):
        p.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    tracer = proxy.get_tracer("litellm")
    with (
        oi.use_tracer_provider(agent),
        oi.flow_run("refactor", run_id=RUN),
        oi.step("edit", step_id="step_e"),
        oi.provider_call("anthropic", "claude-sonnet-4") as call,  # the proxy's span is its child
    ):
        span = tracer.start_span(
            "Received Proxy Server Request",
            kind=SpanKind.SERVER,
            attributes=litellm_attributes("claude-code-key", "anthropic", "claude-sonnet-4", True, 0.0021),
        )
        span.end()
        call.set_usage(100, 30)
    # a request straight to the proxy, nothing upstream traced: a streamed litellm_request with chunk events,
    # and one that failed
    streamed = tracer.start_span(
        "litellm_request", attributes=litellm_attributes("cursor-key", "openai", "gpt-4o-mini", True, 0.0001)
    )
    for i in range(4):
        streamed.add_event("llm.content.completion.chunk", {"index": i})
    streamed.end()
    failed = tracer.start_span(
        "litellm_request", attributes=litellm_attributes("cursor-key", "openai", "gpt-4o-mini", False, 0.0)
    )
    failed.set_status(Status(StatusCode.ERROR))
    failed.end()
    # the LiteLLM SDK outside a proxy: no API key, so not a proxy request (still a provider call)
    sdk = tracer.start_span("litellm_request", attributes=litellm_attributes("", "openai", "gpt-4o", False, 0.0))
    sdk.set_attribute("metadata.user_api_key_hash", "")
    sdk.end()
    for p in (agent, proxy):
        p.shutdown()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("litellm")
    path = folder / "s.duckdb"
    rules = folder / "rules.json"  # the key's alias and team are labels, not secrets (the hash stays dropped)
    rules.write_text(json.dumps([{"match": r"^metadata\.user_api_key_(alias|team_alias)$", "action": "keep"}]))
    receiver = start_receiver(path, redaction_rules=str(rules))
    try:
        emit(receiver)
    finally:
        receiver.stop()
    return path


def test_litellm_proxy_spans_are_proxy_requests(db: Path) -> None:
    got = rows(
        db,
        "SELECT source, client, operation, provider, model, stream, stream_chunks, input_tokens, cost_usd,"
        " cost_source, is_error, nested, run_id, service_name FROM proxy_requests ORDER BY start_time",
    )
    assert got == [
        {"source": "litellm", "client": "claude-code-key", "operation": "acompletion", "provider": "anthropic",
         "model": "claude-sonnet-4", "stream": True, "stream_chunks": None, "input_tokens": 100,
         "cost_usd": 0.0021, "cost_source": "span", "is_error": False, "nested": True, "run_id": RUN,
         "service_name": "litellm-proxy"},
        {"source": "litellm", "client": "cursor-key", "operation": "acompletion", "provider": "openai",
         "model": "gpt-4o-mini", "stream": True, "stream_chunks": 4, "input_tokens": 100, "cost_usd": 0.0001,
         "cost_source": "span", "is_error": False, "nested": False, "run_id": got[1]["run_id"],
         "service_name": "litellm-proxy"},
        {"source": "litellm", "client": "cursor-key", "operation": "acompletion", "provider": "openai",
         "model": "gpt-4o-mini", "stream": False, "stream_chunks": None, "input_tokens": 100, "cost_usd": 0.0,
         "cost_source": "span", "is_error": True, "nested": False, "run_id": got[2]["run_id"],
         "service_name": "litellm-proxy"},
    ]  # fmt: skip
    stored = rows(db, "SELECT count(*) AS n FROM spans WHERE attributes->>'metadata.user_api_key_hash' IS NOT NULL")
    assert stored == [{"n": 0}]  # the default redaction still drops the key's hash
    # every LiteLLM span is a provider call (llm.request.type acompletion), the SDK one included, and the
    # proxy's record of the agent's call is not counted twice
    calls = rows(db, "SELECT provider, request_model, service_name FROM provider_calls ORDER BY start_time")
    assert [(c["service_name"], c["request_model"]) for c in calls] == [
        ("coding-agent", "claude-sonnet-4"),
        ("litellm-proxy", "gpt-4o-mini"),
        ("litellm-proxy", "gpt-4o-mini"),
        ("litellm-proxy", "gpt-4o"),
    ]


def test_agent_run_metrics_and_proxy_health(db: Path) -> None:
    metrics = rows(db, "SELECT metric, value, labels FROM run_metrics_for_run(?) WHERE metric LIKE 'proxy%'", [RUN])
    labels = '{"client":"claude-code-key","provider":"anthropic","model":"claude-sonnet-4"}'
    assert {(m["metric"], m["labels"]): m["value"] for m in metrics}[("proxy_cost_usd", labels)] == 0.0021
    health = rows(db, "SELECT client, provider, model, requests, errors, streamed, stream_chunks FROM proxy_health"
                      " ORDER BY client")  # fmt: skip
    assert health == [
        {"client": "claude-code-key", "provider": "anthropic", "model": "claude-sonnet-4", "requests": 1,
         "errors": 0, "streamed": 1, "stream_chunks": 0},
        {"client": "cursor-key", "provider": "openai", "model": "gpt-4o-mini", "requests": 2, "errors": 1,
         "streamed": 1, "stream_chunks": 4},
    ]  # fmt: skip
    out = run_cli(db, "sql", "SELECT client, requests, errors FROM proxy_health ORDER BY client", "--format", "csv")
    assert out.splitlines() == ["client,requests,errors", "claude-code-key,1,0", "cursor-key,2,1"]
