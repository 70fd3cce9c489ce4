"""Class 5 of issue 32: the default redaction keeps every key of the GenAI, OpenInference and OpenLLMetry
conventions, and still drops the credential keys.

The convention keys are generated from the conventions' registries as the installed packages publish them (the
OpenTelemetry semantic conventions package, generated from the registry: the gen_ai / mcp / jsonrpc attributes and
the GenAI metric names, which instrumentations also put on spans; openinference-semantic-conventions;
opentelemetry-semantic-conventions-ai for OpenLLMetry), plus the 2026 names of semantic-conventions-genai those
packages may not have yet and the Vercel AI SDK's ``ai.*`` keys. Each list is checked through the real path: an
SDK span carrying every key, exported over OTLP/HTTP to a receiver on loopback, and read back from the store.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agent.fold.redact import is_credential_key
from tests.conftest import rows

# semantic-conventions-genai (2026, Development) names the installed registry packages may lack
GENAI_2026 = [
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.client.operation.time_to_first_chunk",
    "gen_ai.client.operation.time_per_output_chunk",
    "gen_ai.server.time_to_first_token",
    "gen_ai.server.time_per_output_token",
    "gen_ai.client.token.usage",
    "gen_ai.token.type",
    "gen_ai.tool.call.decision.outcome",
    "gen_ai.evaluation.name",
    "gen_ai.evaluation.score.value",
    "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.explanation",
    "gen_ai.guardrail.verdict.type",
    "gen_ai.agent.version",
    "gen_ai.workflow.name",
    "a2a.task.id",
    "a2a.task.state",
    "a2a.context.id",
    "mcp.method.name",
    "mcp.session.id",
    "jsonrpc.request.id",
]

# the Vercel AI SDK's ai.* telemetry (experimental_telemetry, v6 line)
VERCEL_AI = [
    "ai.operationId",
    "ai.telemetry.functionId",
    "ai.model.provider",
    "ai.model.id",
    "ai.toolCall.name",
    "ai.toolCall.id",
    "ai.toolCall.args",
    "ai.toolCall.result",
    "ai.usage.inputTokens",
    "ai.usage.outputTokens",
    "ai.usage.totalTokens",
    "ai.usage.cachedInputTokens",
    "ai.usage.reasoningTokens",
    "ai.usage.promptTokens",
    "ai.usage.completionTokens",
    "ai.usage.tokens",
    "ai.usage.inputTokenDetails.cacheReadTokens",
    "ai.usage.inputTokenDetails.cacheWriteTokens",
    "ai.usage.outputTokenDetails.reasoningTokens",
    "ai.response.msToFirstChunk",
    "ai.stream.msToFirstChunk",
    "ai.response.avgOutputTokensPerSecond",
]

CREDENTIAL_KEYS = [
    "http.request.header.authorization",
    "authorization",
    "api_key",
    "openai.api_key",
    "x-api-key",
    "OPENAI_API_KEY",
    "aws_secret_access_key",
    "client_secret",
    "clientSecret",
    "password",
    "db.password",
    "access_token",
    "refresh_token",
    "id_token",
    "auth.token",
    "github.token",
    "session.token",
    "bearer",
    "cookie",
    "http.request.header.cookie",
    "private_key",
    "db.connection_string",
]


def _constants(module: ModuleType) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str) and "." in v}


def convention_keys() -> dict[str, list[str]]:
    """Every attribute key (and GenAI metric name) the installed convention registries publish, by family."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes, jsonrpc_attributes, mcp_attributes
    from opentelemetry.semconv._incubating.metrics import gen_ai_metrics

    families: dict[str, set[str]] = {
        "genai": _constants(gen_ai_attributes) | _constants(gen_ai_metrics),
        "mcp": _constants(mcp_attributes) | _constants(jsonrpc_attributes),
        "genai_2026": set(GENAI_2026),
        "vercel_ai": set(VERCEL_AI),
    }
    try:
        from openinference.semconv import trace as oi_trace
    except ImportError:  # pragma: no cover - openinference is in the test extras
        oi_trace = None
    if oi_trace is not None:
        families["openinference"] = {
            v
            for c in vars(oi_trace).values()
            if inspect.isclass(c)
            for v in _constants(c)  # type: ignore[arg-type]
        }
    try:
        from opentelemetry.semconv_ai import SpanAttributes
    except ImportError:  # pragma: no cover
        SpanAttributes = None
    if SpanAttributes is not None:
        families["openllmetry"] = _constants(SpanAttributes)  # type: ignore[arg-type]
    # a registry constant may be a prefix ("gen_ai.prompt", "llm.input_messages") or a template; kept as keys too
    return {family: sorted(keys) for family, keys in families.items()}


def test_registries_were_read() -> None:
    keys = convention_keys()
    assert len(keys["genai"]) > 50
    assert "gen_ai.server.time_to_first_token" in keys["genai"]
    assert "mcp.method.name" in keys["mcp"]
    assert len(keys.get("openinference", [])) > 50
    assert len(keys.get("openllmetry", [])) > 50


@pytest.mark.parametrize("family", ["genai", "mcp", "genai_2026", "vercel_ai", "openinference", "openllmetry"])
def test_redaction_keeps_convention_keys(family: str) -> None:
    """No convention key is a credential under the default rule."""
    keys = convention_keys()[family]
    assert [k for k in keys if is_credential_key(k)] == []


def test_redaction_drops_credential_keys() -> None:
    assert [k for k in CREDENTIAL_KEYS if not is_credential_key(k)] == []


def test_redaction_through_the_receiver(make_receiver: Any, tmp_path: Path) -> None:
    """One span with every convention key and every credential key, over OTLP/HTTP to a receiver on loopback
    (default redaction): the convention keys are stored, the credential keys are not."""
    receiver = make_receiver()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=100_000))  # the default keeps 128
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    all_keys = sorted({k for keys in convention_keys().values() for k in keys})
    with provider.get_tracer("redaction").start_as_current_span("redaction") as span:
        for key in all_keys:
            span.set_attribute(key, "1")
        for key in CREDENTIAL_KEYS:
            span.set_attribute(key, "s3cr3t")
    provider.shutdown()
    stored = rows(receiver, "SELECT attributes FROM spans WHERE name = 'redaction'")
    assert len(stored) == 1
    attributes = json.loads(stored[0][0])
    assert [k for k in all_keys if k not in attributes] == []
    assert [k for k in CREDENTIAL_KEYS if k in attributes] == []
