"""Provider calls and tool invocations: GenAI attributes, usage, cost, retries, fallbacks, content capture."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from instrument_support import Spans, parent_id, span_id
from opentelemetry.trace import SpanKind

import otel_agent.instrument as oi
from otel_agent import DuckDBSpanExporter
from otel_agent.instrument import attributes as A

MESSAGES = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]


def test_provider_call_span(spans: Spans) -> None:
    with (
        oi.flow_run("w", run_id="r1"),
        oi.step("plan", step_id="s1") as st,
        oi.provider_call("openai", "gpt-4o") as call,
    ):
        call.set_usage(100, 20, cache_read_input_tokens=40, cache_creation_input_tokens=8, reasoning_output_tokens=5)
        call.set_response(model="gpt-4o-2024-08-06", response_id="resp_1", finish_reasons=["stop"])
        call.set_cost(0.0042)
    s = spans.one("provider_call")
    assert s.name == "chat gpt-4o"
    assert s.kind is SpanKind.CLIENT
    assert parent_id(s) == span_id(spans.one("step"))
    assert dict(s.attributes) == {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_PROVIDER_NAME: "openai",
        A.GEN_AI_REQUEST_MODEL: "gpt-4o",
        A.RECORD_KIND: "provider_call",
        A.RUN_ID: "r1",
        A.STEP_ID: st.step_id,
        A.GEN_AI_USAGE_INPUT_TOKENS: 100,
        A.GEN_AI_USAGE_OUTPUT_TOKENS: 20,
        A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: 40,
        A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: 8,
        A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: 5,
        A.GEN_AI_RESPONSE_MODEL: "gpt-4o-2024-08-06",
        A.GEN_AI_RESPONSE_ID: "resp_1",
        A.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
        A.COST_USD: 0.0042,
    }


def test_sampling_relevant_attributes_are_set_at_start(spans: Spans) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    seen: list[dict] = []

    class Recording(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None):
            seen.append({"name": name, "kind": kind, **dict(attributes or {})})
            return SamplingResult(Decision.DROP)

        def get_description(self) -> str:
            return "recording"

    with oi.use_tracer_provider(TracerProvider(sampler=Recording())):
        with oi.provider_call("anthropic", "claude-sonnet"):
            pass
        with oi.tool_invocation("web_search"):
            pass
    assert seen[0]["name"] == "chat claude-sonnet"
    assert seen[0]["kind"] is SpanKind.CLIENT
    assert seen[0][A.GEN_AI_OPERATION_NAME] == "chat"
    assert seen[0][A.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert seen[0][A.GEN_AI_REQUEST_MODEL] == "claude-sonnet"
    assert seen[1][A.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert seen[1][A.GEN_AI_TOOL_NAME] == "web_search"


def test_retries_and_fallbacks_are_events_and_the_span_names_what_served(spans: Spans) -> None:
    with oi.provider_call("tavily", "search", operation="retrieval", data_source_id="web") as call:
        assert call.retry("timeout") == 1
        assert call.retry() == 2
        call.fallback(to_provider="exa", reason="rate_limited")
        call.fallback(to_model="search-pro")
        with pytest.raises(oi.InvalidValueError):
            call.fallback(to_provider="exa", to_model="search-pro")
    s = spans.one("provider_call")
    assert s.name == "retrieval search-pro"
    assert s.attributes[A.GEN_AI_OPERATION_NAME] == "retrieval"
    assert s.attributes[A.GEN_AI_DATA_SOURCE_ID] == "web"
    assert s.attributes[A.GEN_AI_PROVIDER_NAME] == "exa"
    assert s.attributes[A.GEN_AI_REQUEST_MODEL] == "search-pro"
    assert s.attributes[A.FALLBACK_ORIGINAL_PROVIDER] == "tavily"
    assert s.attributes[A.FALLBACK_ORIGINAL_MODEL] == "search"
    assert s.attributes[A.RETRY_COUNT] == 2
    assert s.attributes[A.FALLBACK_COUNT] == 2
    assert [(e.name, dict(e.attributes)) for e in s.events] == [
        (A.EVENT_RETRY, {A.RETRY_ATTEMPT: 1, A.RETRY_ERROR_TYPE: "timeout"}),
        (A.EVENT_RETRY, {A.RETRY_ATTEMPT: 2}),
        (
            A.EVENT_FALLBACK,
            {
                A.FALLBACK_FROM_PROVIDER: "tavily",
                A.FALLBACK_FROM_MODEL: "search",
                A.FALLBACK_TO_PROVIDER: "exa",
                A.FALLBACK_TO_MODEL: "search",
                A.FALLBACK_REASON: "rate_limited",
            },
        ),
        (
            A.EVENT_FALLBACK,
            {
                A.FALLBACK_FROM_PROVIDER: "exa",
                A.FALLBACK_FROM_MODEL: "search",
                A.FALLBACK_TO_PROVIDER: "exa",
                A.FALLBACK_TO_MODEL: "search-pro",
            },
        ),
    ]


def test_no_retry_or_fallback_attributes_when_none_happened(spans: Spans) -> None:
    with oi.provider_call("openai", "gpt-4o"):
        pass
    attrs = spans.one("provider_call").attributes
    assert A.RETRY_COUNT not in attrs
    assert A.FALLBACK_COUNT not in attrs
    assert A.COST_USD not in attrs


def test_cost_replaces_on_the_call_and_adds_to_the_run(spans: Spans) -> None:
    with oi.flow_run("w") as run:
        with oi.provider_call("openai", "gpt-4o") as call:
            call.set_cost(0.5)
            call.set_cost(0.25)  # corrected figure replaces the estimate
        with oi.tool_invocation("search") as tool:
            tool.set_cost(0.1)
        with pytest.raises(oi.InvalidValueError), oi.tool_invocation("search") as t2:
            t2.set_cost(-1)
    assert run.cost_usd == pytest.approx(0.35)
    assert spans.one("flow_run").attributes[A.RUN_USAGE_COST_USD] == pytest.approx(0.35)
    assert spans.kind("provider_call")[0].attributes[A.COST_USD] == 0.25


def test_usage_validation() -> None:
    with oi.provider_call("openai", "gpt-4o") as call:
        with pytest.raises(oi.InvalidValueError):
            call.set_usage(-1)
        with pytest.raises(oi.InvalidValueError):
            call.set_usage(True)


def test_unknown_operation_is_rejected() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.provider_call("openai", "gpt-4o", operation="invoke_agent")


def test_tool_invocation_span(spans: Spans) -> None:
    with (
        oi.flow_run("w", run_id="r"),
        oi.step("search"),
        oi.tool_invocation("web_search", call_id="call_1", provider="tavily") as tool,
    ):
        tool.retry("502")
    s = spans.one("tool_invocation")
    assert s.name == "execute_tool web_search"
    assert s.kind is SpanKind.INTERNAL
    assert s.attributes[A.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert s.attributes[A.GEN_AI_TOOL_NAME] == "web_search"
    assert s.attributes[A.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert s.attributes[A.GEN_AI_TOOL_TYPE] == "function"
    assert s.attributes[A.TOOL_PROVIDER] == "tavily"
    assert s.attributes[A.RETRY_COUNT] == 1
    assert s.attributes[A.RUN_ID] == "r"


# --- content capture: argument > enclosing run > configure() > env > off ------------------------------------
def _capture(spans: Spans, **kwargs: object) -> dict:
    spans.clear()
    with oi.provider_call("openai", "gpt-4o", **kwargs) as call:  # type: ignore[arg-type]
        call.record_input(MESSAGES, system_instructions=[{"type": "text", "content": "be brief"}])
        call.record_output("plain text is passed through")
    with oi.tool_invocation("calc", **kwargs) as tool:  # type: ignore[arg-type]
        tool.record_arguments({"x": 1})
        tool.record_result({"y": 2})
    attrs = dict(spans.one("provider_call").attributes)
    attrs.update(spans.one("tool_invocation").attributes)
    return attrs


CONTENT_KEYS = {
    A.GEN_AI_INPUT_MESSAGES,
    A.GEN_AI_OUTPUT_MESSAGES,
    A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.GEN_AI_TOOL_CALL_RESULT,
}


def test_content_is_off_by_default(spans: Spans) -> None:
    assert CONTENT_KEYS.isdisjoint(_capture(spans))


def test_content_on_by_argument_is_json(spans: Spans) -> None:
    attrs = _capture(spans, capture_content=True)
    assert json.loads(attrs[A.GEN_AI_INPUT_MESSAGES]) == MESSAGES
    assert json.loads(attrs[A.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "be brief"}]
    assert attrs[A.GEN_AI_OUTPUT_MESSAGES] == "plain text is passed through"
    assert json.loads(attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"x": 1}
    assert json.loads(attrs[A.GEN_AI_TOOL_CALL_RESULT]) == {"y": 2}


@pytest.mark.parametrize(
    ("value", "expected"), [("true", True), ("1", True), ("ON", True), ("no", False), ("junk", False)]
)
def test_content_env_variable(spans: Spans, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv(oi.CAPTURE_CONTENT_ENV, value)
    assert (A.GEN_AI_INPUT_MESSAGES in _capture(spans)) is expected


def test_content_precedence(spans: Spans, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(oi.CAPTURE_CONTENT_ENV, "true")
    assert CONTENT_KEYS.isdisjoint(_capture(spans, capture_content=False))  # argument beats env
    oi.configure(capture_content=False)
    assert CONTENT_KEYS.isdisjoint(_capture(spans))  # configure() beats env
    with oi.flow_run("w", capture_content=True):
        assert set(_capture(spans)) >= CONTENT_KEYS  # enclosing run beats configure()
        assert CONTENT_KEYS.isdisjoint(_capture(spans, capture_content=False))  # argument beats run
    monkeypatch.delenv(oi.CAPTURE_CONTENT_ENV)
    oi.configure()
    with oi.flow_run("w", capture_content=False):
        assert set(_capture(spans, capture_content=True)) >= CONTENT_KEYS


def test_provider_call_as_decorator_uses_a_fresh_call_each_time(spans: Spans) -> None:
    @oi.provider_call("openai", "gpt-4o")
    def ask(n: int) -> int:
        call = oi.current_operation()
        assert isinstance(call, oi.ProviderCall)
        call.set_usage(n, n)
        call.set_cost(0.01)
        return n

    with oi.flow_run("w") as run:
        assert [ask(1), ask(2)] == [1, 2]
    assert run.model_calls == 2
    assert run.cost_usd == pytest.approx(0.02)
    assert [s.attributes[A.GEN_AI_USAGE_INPUT_TOKENS] for s in spans.kind("provider_call")] == [1, 2]


def test_a_model_call_records_its_data_dependencies(spans: Spans, tmp_path: Path) -> None:
    """Seed 001's agent_runs.json: prompt, agent, input/output artifacts, token estimate, iteration — through
    the helpers, into a real store, answered by one query."""
    with oi.flow_run("game_change", run_id="run_q"), oi.step("quality_review", iteration=2):
        with oi.provider_call(
            "openai_compatible",
            "qwen-max",
            agent_name="quality_review_agent",
            prompt_name="quality_review",
            prompt_version="3",
            input_artifacts=("requirement.json", "structured_goal.json", "comparison_report.json"),
            iteration=2,
        ) as call:
            call.set_token_estimate(2400)
            call.set_output_artifacts(["quality_reviews.json"])
        with oi.tool_invocation("diff_config", input_artifacts=["candidate_config.json"], iteration=2):
            pass
    (span,) = spans.kind("provider_call")
    assert {k: v for k, v in span.attributes.items() if k.startswith(("gen_ai.prompt", "gen_ai.agent"))} == {
        A.GEN_AI_AGENT_NAME: "quality_review_agent",
        A.GEN_AI_PROMPT_NAME: "quality_review",
        A.GEN_AI_PROMPT_VERSION: "3",
    }
    assert span.attributes[A.CALL_INPUT_ARTIFACTS] == (
        "requirement.json",
        "structured_goal.json",
        "comparison_report.json",
    )
    assert span.attributes[A.CALL_OUTPUT_ARTIFACTS] == ("quality_reviews.json",)
    assert span.attributes[A.CALL_TOKEN_ESTIMATE] == 2400
    assert span.attributes[A.ITERATION] == 2
    assert A.GEN_AI_USAGE_INPUT_TOKENS not in span.attributes  # an estimate is not usage
    tool = spans.one("tool_invocation")
    assert tool.attributes[A.CALL_INPUT_ARTIFACTS] == ("candidate_config.json",)
    assert tool.attributes[A.ITERATION] == 2

    path = tmp_path / "deps.duckdb"
    exporter = DuckDBSpanExporter(path)
    exporter.export(list(spans.all))
    exporter.shutdown()
    con = duckdb.connect(str(path), read_only=True)
    answer = con.execute(
        """SELECT attributes->>'gen_ai.agent.name',
                  from_json(attributes->'otel_agent.call.input_artifacts', '["VARCHAR"]'),
                  from_json(attributes->'otel_agent.call.output_artifacts', '["VARCHAR"]')
           FROM spans WHERE record_kind = 'provider_call' AND run_id = 'run_q'
             AND (attributes->>'otel_agent.iteration')::INT = 2"""
    ).fetchall()
    con.close()
    assert answer == [
        (
            "quality_review_agent",
            ["requirement.json", "structured_goal.json", "comparison_report.json"],
            ["quality_reviews.json"],
        )
    ]


def test_calls_without_dependencies_emit_none_of_their_attributes(spans: Spans) -> None:
    with oi.provider_call("openai", "gpt-4o"), oi.tool_invocation("t"):
        pass
    deps = {A.CALL_INPUT_ARTIFACTS, A.CALL_OUTPUT_ARTIFACTS, A.CALL_TOKEN_ESTIMATE, A.ITERATION, A.GEN_AI_PROMPT_NAME}
    assert all(not deps & set(s.attributes) for s in spans.all)
