"""The run views over spans produced by real third-party instrumentation libraries, driven offline against a
fake OpenAI-compatible server on loopback (tests/derived_runs/fake_openai.py):

- OpenInference ``openinference-instrumentation-openai-agents`` with the ``openai-agents`` SDK (an agent
  with a handoff to an agent with a tool);
- OpenLLMetry: traceloop's ``opentelemetry-instrumentation-openai`` (plain client calls) and its
  ``opentelemetry-instrumentation-openai-agents`` (same agents), together as traceloop-sdk enables them;
- the OTel contrib ``opentelemetry-instrumentation-openai-v2``, alone and inside our own provider_call;
- older GenAI conventions (``gen_ai.system``, ``gen_ai.usage.prompt_tokens``) and OpenInference cost
  attributes, as hand-built spans (no maintained library emits the old names any more).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent.instrument as oi
from tests.derived_runs.fake_openai import DATED_SUFFIX, FakeOpenAI
from tests.derived_runs.runs_support import query, write_store
from tests.tools import needs_module

needs_module("agents")
needs_module("openai")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def capture(instrumentor: Any, body: Callable[[TracerProvider], None]) -> list[ReadableSpan]:
    """Run ``body`` with ``instrumentor`` instrumenting onto an SDK provider; return the finished spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentors = instrumentor if isinstance(instrumentor, list) else [instrumentor]
    for inst in instrumentors:
        inst.instrument(tracer_provider=provider)
    try:
        body(provider)
    finally:
        for inst in reversed(instrumentors):
            inst.uninstrument()
    provider.shutdown()
    return list(exporter.get_finished_spans())


def run_agents(base_url: str) -> str:
    """An OpenAI Agents SDK run: triage_agent hands off to weather_agent, which calls its get_weather tool."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI

    @function_tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    client = AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    weather = Agent(name="weather_agent", instructions="Answer weather questions.", tools=[get_weather], model=model)
    triage = Agent(name="triage_agent", instructions="Route the question.", handoffs=[weather], model=model)
    result = asyncio.run(Runner.run(triage, "What is the weather in Paris?"))
    return str(result.final_output)


@pytest.fixture
def no_agents_exporter() -> Iterator[None]:
    """The Agents SDK exports its own traces to OpenAI by default: keep only the processors a test adds."""
    from agents import set_trace_processors

    set_trace_processors([])
    yield
    set_trace_processors([])


def test_openinference_openai_agents(fake_openai: FakeOpenAI, tmp_path: Path, no_agents_exporter: None) -> None:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    answers: list[str] = []
    spans = capture(OpenAIAgentsInstrumentor(), lambda _: answers.append(run_agents(fake_openai.base_url)))
    assert answers == ["It is sunny in Paris."]
    path = write_store(tmp_path / "oi.duckdb", spans)

    runs = query(path, "SELECT * FROM runs")
    assert len(runs) == 1
    run = runs[0]
    trace_id = run["trace_id"]
    assert run["run_id"] == trace_id  # no otel_agent.run.id: the trace is the run
    assert {k: run[k] for k in ("workflow_name", "agent_name", "convention", "status", "steps", "provider_calls",
                                "tool_invocations", "handoffs", "input_tokens", "output_tokens", "errors")} == {
        "workflow_name": "Agent workflow", "agent_name": "triage_agent", "convention": "openinference",
        "status": "ok", "steps": 2, "provider_calls": 3, "tool_invocations": 1, "handoffs": 1,
        "input_tokens": 120 + 140 + 160, "output_tokens": 12 + 12 + 20, "errors": 0,
    }  # fmt: skip
    # gpt-4o from the price table: input 420 * 2.50 + output 44 * 10.00 per million
    assert run["cost_usd"] == pytest.approx((420 * 2.5 + 44 * 10.0) / 1e6)

    steps = query(path, "SELECT step_name, agent_name, provider_calls, tool_invocations FROM steps ORDER BY start_time")
    assert [tuple(r.values()) for r in steps] == [
        ("triage_agent", "triage_agent", 1, 0),
        ("weather_agent", "weather_agent", 2, 1),
    ]
    calls = query(
        path,
        "SELECT p.provider, p.request_model, p.input_tokens, p.output_tokens, p.cost_source, p.convention, s.step_name "
        "FROM provider_calls p JOIN steps s USING (run_id, step_id) ORDER BY p.start_time",
    )
    assert [tuple(r.values()) for r in calls] == [
        ("openai", "gpt-4o", 120, 12, "price_table", "openinference", "triage_agent"),
        ("openai", "gpt-4o", 140, 12, "price_table", "openinference", "weather_agent"),
        ("openai", "gpt-4o", 160, 20, "price_table", "openinference", "weather_agent"),
    ]
    tools = query(path, "SELECT t.tool_name, s.step_name FROM tool_invocations t JOIN steps s USING (run_id, step_id)")
    assert [tuple(r.values()) for r in tools] == [("get_weather", "weather_agent")]
    kinds = query(
        path,
        "SELECT category, count(*) AS n FROM classified_spans GROUP BY ALL ORDER BY category",
    )
    assert {r["category"]: r["n"] for r in kinds} == {
        "flow_run": 1, "handoff": 1, "other": 4, "provider_call": 3, "step": 2, "tool_invocation": 1,
    }  # fmt: skip
    timeline = query(path, "SELECT event, subject, detail FROM run_timeline ORDER BY seq")
    assert [tuple(r.values()) for r in timeline] == [
        ("run.started", "Agent workflow", None),
        ("step.started", "triage_agent", None),
        ("handoff", "weather_agent", "triage_agent"),
        ("step.succeeded", "triage_agent", None),
        ("step.started", "weather_agent", None),
        ("step.succeeded", "weather_agent", None),
        ("run.succeeded", "Agent workflow", None),
    ]
    health = query(path, "SELECT provider, model, calls, errors FROM provider_health")
    assert [tuple(r.values()) for r in health] == [("openai", "gpt-4o", 3, 0)]


def test_openinference_agents_inside_our_run(fake_openai: FakeOpenAI, tmp_path: Path, no_agents_exporter: None) -> None:
    """Third-party spans opened inside our flow_run/step join our run; the agents become nested steps."""
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    def body(provider: TracerProvider) -> None:
        with (
            oi.use_tracer_provider(provider),
            oi.flow_run("weather_flow", run_id="run_mixed"),
            oi.step("ask", step_id="step_ask"),
        ):
            run_agents(fake_openai.base_url)

    path = write_store(tmp_path / "mixed.duckdb", capture(OpenAIAgentsInstrumentor(), body))
    runs = query(path, "SELECT run_id, workflow_name, conventions, steps, provider_calls, tool_invocations FROM runs")
    assert [tuple(r.values()) for r in runs] == [
        ("run_mixed", "weather_flow", ["openinference", "otel_agent"], 4, 3, 1)
    ]
    steps = query(path, "SELECT step_id, step_name, parent_step_id FROM steps ORDER BY start_time")
    names = [(r["step_name"], r["parent_step_id"]) for r in steps]
    # 'Agent workflow' (the SDK trace's root agent span) sits in our step, the two agents inside it
    assert names[0] == ("ask", None)
    assert names[1] == ("Agent workflow", "step_ask")
    assert [n for n, _ in names[2:]] == ["triage_agent", "weather_agent"]
    assert {p for _, p in names[2:]} == {steps[1]["step_id"]}
    sources = query(path, "SELECT DISTINCT run_id_source FROM classified_spans ORDER BY 1")
    assert [r["run_id_source"] for r in sources] == ["attribute", "parent", "trace"]


def test_openllmetry_agents_with_openai_instrumented(
    fake_openai: FakeOpenAI, tmp_path: Path, no_agents_exporter: None
) -> None:
    """traceloop's agents + openai instrumentations together: traceloop.span.kind workflow/agent/tool/handoff;
    the openai.chat span nested in each openai.response span gives it its usage and is counted once."""
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    spans = capture([OpenAIAgentsInstrumentor(), OpenAIInstrumentor()], lambda _: run_agents(fake_openai.base_url))
    path = write_store(tmp_path / "tl.duckdb", spans)
    run = query(path, "SELECT * FROM runs")[0]
    assert {k: run[k] for k in ("workflow_name", "agent_name", "convention", "steps", "provider_calls",
                                "tool_invocations", "handoffs", "input_tokens", "output_tokens")} == {
        "workflow_name": "Agent Workflow", "agent_name": "triage_agent", "convention": "openllmetry",
        "steps": 2, "provider_calls": 3, "tool_invocations": 1, "handoffs": 1,
        "input_tokens": 120 + 140 + 160, "output_tokens": 12 + 12 + 20,
    }  # fmt: skip
    nested = query(
        path,
        "SELECT span_name, nested_call, convention, count(*) AS n FROM classified_spans "
        "WHERE category = 'provider_call' GROUP BY ALL ORDER BY span_name",
    )
    assert [tuple(r.values()) for r in nested] == [
        ("openai.chat", True, "gen_ai", 3),
        ("openai.response", False, "gen_ai", 3),
    ]
    calls = query(
        path, "SELECT request_model, response_model, cache_read_tokens, cost_source FROM provider_calls LIMIT 1"
    )
    assert tuple(calls[0].values()) == ("gpt-4o", "gpt-4o" + DATED_SUFFIX, 64, "price_table")
    kinds = query(
        path, "SELECT category, count(*) AS n FROM classified_spans WHERE convention = 'openllmetry' GROUP BY ALL"
    )
    assert {r["category"]: r["n"] for r in kinds} == {"flow_run": 1, "step": 2, "tool_invocation": 1, "handoff": 1}


def test_openllmetry_openai_client(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """traceloop's opentelemetry-instrumentation-openai on plain client calls: each call is its own run."""
    from openai import NotFoundError, OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    def body(_: TracerProvider) -> None:
        client = OpenAI(base_url=fake_openai.base_url, api_key="test-key", max_retries=0)
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(NotFoundError, match="no route /v1/embeddings"):  # the fake server has no embeddings route
            client.embeddings.create(model="text-embedding-3-small", input="x")

    path = write_store(tmp_path / "tl_openai.duckdb", capture(OpenAIInstrumentor(), body))
    calls = query(
        path,
        "SELECT operation, provider, request_model, response_model, input_tokens, output_tokens, "
        "cache_read_tokens, reasoning_tokens, round(cost_usd, 12) AS cost, cost_missing_reason, is_error, "
        "error_type, run_id = trace_id AS run_is_trace FROM provider_calls ORDER BY start_time",
    )
    # gpt-4o-mini: (110 - 64) * 0.15 + 64 * 0.075 + 20 * 0.60 per million
    assert [tuple(r.values()) for r in calls] == [
        ("chat", "openai", "gpt-4o-mini", "gpt-4o-mini" + DATED_SUFFIX, 110, 20, 64, 5,
         round((46 * 0.15 + 64 * 0.075 + 20 * 0.60) / 1e6, 12), None, False, None, True),
        ("embeddings", "openai", "text-embedding-3-small", None, None, None, None, None,
         None, "no_usage", True, "NotFoundError", True),
    ]  # fmt: skip
    runs = query(path, "SELECT workflow_name, status, provider_calls, errors FROM runs ORDER BY start_time")
    assert [tuple(r.values()) for r in runs] == [("openai.chat", "ok", 1, 0), ("openai.embeddings", "error", 1, 1)]


def test_otel_contrib_openai_v2(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    def body(_: TracerProvider) -> None:
        client = OpenAI(base_url=fake_openai.base_url, api_key="test-key", max_retries=0)
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "weather?"}],
            tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
        )

    path = write_store(tmp_path / "v2.duckdb", capture(OpenAIInstrumentor(), body))
    calls = query(
        path,
        "SELECT span_name, convention, operation, provider, request_model, response_model, input_tokens, "
        "output_tokens, round(cost_usd, 12) AS cost, cost_source FROM provider_calls ORDER BY start_time",
    )
    assert [tuple(r.values()) for r in calls] == [
        ("chat gpt-4o", "gen_ai", "chat", "openai", "gpt-4o", "gpt-4o" + DATED_SUFFIX, 110, 20,
         round((110 * 2.5 + 20 * 10.0) / 1e6, 12), "price_table"),
        ("chat gpt-4o", "gen_ai", "chat", "openai", "gpt-4o", "gpt-4o" + DATED_SUFFIX, 110, 12,
         round((110 * 2.5 + 12 * 10.0) / 1e6, 12), "price_table"),
    ]  # fmt: skip
    health = query(path, "SELECT provider, model, calls, errors, input_tokens FROM provider_health")
    assert [tuple(r.values()) for r in health] == [("openai", "gpt-4o", 2, 0, 220)]


def test_openai_v2_inside_our_provider_call_counts_once(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    def body(provider: TracerProvider) -> None:
        client = OpenAI(base_url=fake_openai.base_url, api_key="test-key", max_retries=0)
        with (
            oi.use_tracer_provider(provider),
            oi.flow_run("wrapped", run_id="run_wrapped"),
            oi.step("answer", step_id="step_answer"),
            oi.provider_call("openai", "gpt-4o") as call,
        ):
            response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
            call.set_usage(response.usage.prompt_tokens, response.usage.completion_tokens)
            call.set_response(model=response.model)

    path = write_store(tmp_path / "wrapped.duckdb", capture(OpenAIInstrumentor(), body))
    spans = query(
        path,
        "SELECT convention, category, nested_call, run_id, run_id_source, step_id FROM classified_spans "
        "WHERE category = 'provider_call' ORDER BY convention",
    )
    assert [tuple(r.values()) for r in spans] == [
        ("gen_ai", "provider_call", True, "run_wrapped", "parent", "step_answer"),
        ("otel_agent", "provider_call", False, "run_wrapped", "attribute", "step_answer"),
    ]
    run = query(path, "SELECT provider_calls, input_tokens, output_tokens FROM runs")[0]
    assert tuple(run.values()) == (1, 110, 20)


def _hand_built_spans() -> list[ReadableSpan]:
    """Spans as older or other instrumentations write them, built with the SDK's tracer."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("legacy-app")
    # GenAI conventions <= v1.26: gen_ai.system, prompt/completion tokens, no operation name
    with tracer.start_as_current_span("legacy_chat", attributes={
        "gen_ai.system": "OpenAI", "gen_ai.request.model": "gpt-4-0613",
        "gen_ai.usage.prompt_tokens": 100, "gen_ai.usage.completion_tokens": 10,
    }):  # fmt: skip
        pass
    # OpenInference with costs on the span (they win over the price table)
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT", "agent.name": "a1"}):
        with tracer.start_as_current_span("llm", attributes={
            "openinference.span.kind": "LLM", "llm.provider": "azure", "llm.system": "openai",
            "llm.model_name": "gpt-4o-2024-11-20", "llm.token_count.prompt": 1000,
            "llm.token_count.completion": 100, "llm.token_count.prompt_details.cache_read": 200,
            "llm.cost.prompt": 0.002, "llm.cost.completion": 0.001,
        }):  # fmt: skip
            pass
        with tracer.start_as_current_span("search_docs", attributes={"openinference.span.kind": "RETRIEVER"}):
            pass
        with tracer.start_as_current_span("moderation", attributes={"openinference.span.kind": "GUARDRAIL"}):
            pass
        with tracer.start_as_current_span("judge", attributes={"openinference.span.kind": "EVALUATOR"}):
            pass
    # Anthropic on Bedrock-style names with a dated model: priced by model alone
    with tracer.start_as_current_span("chat", attributes={
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock",
        "gen_ai.request.model": "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 100,
    }):  # fmt: skip
        pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


def test_legacy_genai_and_openinference_costs(tmp_path: Path) -> None:
    path = write_store(tmp_path / "hand.duckdb", _hand_built_spans())
    calls = query(
        path,
        "SELECT convention, provider, request_model, input_tokens, output_tokens, cache_read_tokens, "
        "round(cost_usd, 12) AS cost, cost_source, price_model_pattern FROM provider_calls ORDER BY start_time",
    )
    assert [tuple(r.values()) for r in calls] == [
        ("gen_ai_legacy", "openai", "gpt-4-0613", 100, 10, None, round((100 * 30 + 10 * 60) / 1e6, 12),
         "price_table", "gpt-4"),
        ("openinference", "azure", "gpt-4o-2024-11-20", 1000, 100, 200, 0.003, "span", None),
        ("gen_ai", "aws.bedrock", "us.anthropic.claude-3-5-haiku-20241022-v1:0", 1000, 100, None,
         round((1000 * 0.8 + 100 * 4.0) / 1e6, 12), "price_table", "claude-3-5-haiku"),
    ]  # fmt: skip
    kinds = query(
        path,
        "SELECT span_name, category FROM classified_spans WHERE convention = 'openinference' ORDER BY span_name",
    )
    assert [tuple(r.values()) for r in kinds] == [
        ("agent", "flow_run"),
        ("judge", "verifier_result"),
        ("llm", "provider_call"),
        ("moderation", "guard_result"),
        ("search_docs", "retrieval"),
    ]
    run = query(path, "SELECT * FROM runs WHERE convention = 'openinference'")[0]
    assert (run["agent_name"], run["retrievals"], run["guard_checks"], run["verifier_results"]) == ("a1", 1, 1, 1)
