"""BeeAI Framework (issue 32: a second Python agent framework the suite did not cover) with its published
OpenTelemetry instrumentation, openinference-instrumentation-beeai, against the fake OpenAI-compatible server on
loopback (tests/fidelity3/fake_stream.py; BeeAI's own OpenAIChatModel, which calls the server through LiteLLM).
The instrumentation listens to BeeAI's event emitter and writes a run's spans when the run ends; they go over
OTLP/HTTP to the receiver, each export delivered twice (an exporter's retry: re-sent spans change nothing).

Why BeeAI: of the candidates (strands-agents, google-adk, crewai, beeai-framework), it is the one whose install
downgrades nothing the suite uses (strands-agents downgrades mcp and the OpenTelemetry SDK, google-adk the
OpenTelemetry SDK, crewai mcp, httpx and pydantic).

Two RequirementAgent runs (BeeAI's recommended agent: the model calls tools, then the `final_answer` tool), ground
truth from BeeAI's own RequirementAgentOutput (its steps: the tool calls, their errors; its usage) and from the
fake model server (the calls made):
- an agent whose tool answers;
- an agent whose tool raises (BeeAI turns it into a ToolError, tells the model, and the run succeeds).
Both in a conversation set the OpenInference way (``using_session``).

Failure class found: the instrumentation writes the agent's emitter events as zero-length spans of the agent's
kind under it (`final_answer`, AGENT), which counted as a nested agent, a step; a zero-length agent span right
inside an agent span is now no step (docs/views-runs.md).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import dict_rows, start_receiver
from tests.fidelity3 import fake_stream
from tests.fidelity3.fake_stream import FakeStreamingOpenAI
from tests.fidelity3.resend import TwiceForwarder
from tests.tools import needs_module

SCRIPTED = fake_stream.answer


def answer(body: dict[str, Any], counter: int) -> dict[str, Any]:
    """The fake server's script, except that where it would answer in text and BeeAI offers its `final_answer`
    tool (a RequirementAgent asks for a tool call every turn), the text is that tool's argument."""
    doc = SCRIPTED(body, counter)
    choice = doc["choices"][0]
    message = choice["message"]
    names = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
    if not message.get("tool_calls") and "final_answer" in names:
        arguments = json.dumps({"response": message["content"]})
        message["tool_calls"] = [
            {
                "id": f"call_{counter:04d}",
                "type": "function",
                "function": {"name": "final_answer", "arguments": arguments},
            }
        ]
        message["content"] = None
        choice["finish_reason"] = "tool_calls"
    return doc


async def run_agents(base_url: str) -> dict[str, dict[str, Any]]:
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.memory import UnconstrainedMemory
    from beeai_framework.tools import tool
    from openinference.instrumentation import using_session

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @tool
    def forecast(city: str) -> str:
        """A forecast that fails."""
        raise ValueError(f"no forecast for {city}")

    truth: dict[str, dict[str, Any]] = {}
    for name, tools, session in (("weather_agent", [get_weather], "s-ok"), ("forecast_agent", [forecast], "s-bad")):
        # tool_choice "required" (the default for OpenAI itself; with a base_url BeeAI assumes a server without it)
        model = OpenAIChatModel(
            "gpt-4o-mini",
            base_url=base_url,
            api_key="test-key",
            tool_choice_support={"required", "none", "single", "auto"},
        )
        agent = RequirementAgent(llm=model, tools=tools, memory=UnconstrainedMemory(), name=name)
        with using_session(session):
            output = await agent.run("Weather in Paris?")
        steps = output.state.steps
        truth[name] = {
            "session": session,
            "tools": [s.tool.name for s in steps if s.tool is not None],
            "tool_errors": [s.tool.name for s in steps if s.tool is not None and s.error is not None],
            "usage": (output.state.usage.prompt_tokens, output.state.usage.completion_tokens),
            "answer": output.state.result.response,
        }
    return truth


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, Any]]]:
    needs_module("beeai_framework")
    needs_module("openinference.instrumentation.beeai")
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    receiver = start_receiver(tmp_path_factory.mktemp("beeai") / "beeai.duckdb")
    instrumentor = BeeAIInstrumentor()
    patch = pytest.MonkeyPatch()
    patch.setattr(fake_stream, "answer", answer)
    # LiteLLM (under BeeAI's OpenAIChatModel) reads its model price map from the network on import unless told not to
    patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        with FakeStreamingOpenAI() as fake, TwiceForwarder(receiver.http_address) as forwarder:
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=forwarder.url + "/v1/traces")))
            instrumentor.instrument(tracer_provider=provider)
            # from an empty context: a span another test in this process left current must not parent the runs
            token = context.attach(context.Context())
            try:
                truth = asyncio.run(run_agents(fake.base_url))
            finally:
                context.detach(token)
                instrumentor.uninstrument()
                provider.shutdown()
            assert forwarder.forwarded > 0
            calls = [r for r in fake.requests if r["path"].endswith("/chat/completions")]
        truth["_calls"] = {"count": len(calls), "models": sorted({r["body"]["model"] for r in calls})}
        yield receiver, truth
    finally:
        patch.undo()
        receiver.stop()


def test_beeai_agents(scenario: tuple[Any, dict[str, Any]]) -> None:
    receiver, truth = scenario
    agents = {k: v for k, v in truth.items() if not k.startswith("_")}
    assert agents["forecast_agent"]["tool_errors"] == ["forecast"]
    runs = dict_rows(
        receiver,
        "SELECT agent_name, session_id, convention, status, provider_calls, tool_invocations, input_tokens, "
        "output_tokens, errors, steps FROM runs ORDER BY start_time",
    )
    # the spans of both runs arrived twice: each run, call and tool once
    assert [r["agent_name"] for r in runs] == list(agents)
    for run in runs:
        expected = agents[run["agent_name"]]
        assert run["session_id"] == expected["session"]
        assert run["convention"] == "openinference"
        assert run["status"] == "ok"  # BeeAI told the model the tool failed; the run answered
        assert (run["input_tokens"], run["output_tokens"]) == expected["usage"], run["agent_name"]
        # BeeAI's steps are its tool calls, the final answer included
        assert run["tool_invocations"] == len(expected["tools"]), run["agent_name"]
        assert run["errors"] == len(expected["tool_errors"]), run["agent_name"]
        # no sub-agent ran: the instrumentation's zero-length AGENT span for the agent's `final_answer` event is no
        # step (class: an event written as a span of its parent's kind is not work)
        assert run["steps"] == 0, run["agent_name"]
    assert sum(r["provider_calls"] for r in runs) == truth["_calls"]["count"]
    tools = dict_rows(receiver, "SELECT tool_name, is_error FROM tool_invocations ORDER BY start_time")
    assert tools == [
        {"tool_name": name, "is_error": name in agent["tool_errors"]}
        for agent in agents.values()
        for name in agent["tools"]
    ]
    providers = dict_rows(receiver, "SELECT DISTINCT provider, request_model FROM provider_calls")
    assert providers == [{"provider": "openai", "request_model": m} for m in truth["_calls"]["models"]]
