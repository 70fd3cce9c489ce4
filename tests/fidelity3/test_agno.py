"""Agno (issue 32: a Python agent framework the suite did not cover) with its published OpenTelemetry
instrumentation, openinference-instrumentation-agno, against the fake OpenAI-compatible server on loopback
(tests/fidelity3/fake_stream.py; agno's own OpenAIChat model). The spans go over OTLP/HTTP to a receiver.

Three runs, ground truth from agno's own RunOutput (metrics, tool executions, tool errors, session):
- an agent with a tool;
- an agent whose tool raises (agno catches it and tells the model; the run itself succeeds);
- a Team whose leader delegates to a member agent (the team is the AGENT root: class 1, the team names the run).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import dict_rows
from tests.fidelity3 import fake_stream
from tests.fidelity3.fake_stream import FakeStreamingOpenAI
from tests.tools import needs_module


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeStreamingOpenAI]:
    monkeypatch.setitem(fake_stream.MEMBER_IDS, "member_id", "billing-member")  # agno's id of the member below
    with FakeStreamingOpenAI() as server:
        yield server


def usage(output: Any) -> tuple[int, int]:
    return output.metrics.input_tokens, output.metrics.output_tokens


def test_agno_agents_and_team(make_receiver: Any, fake_openai: FakeStreamingOpenAI) -> None:
    needs_module("agno")
    needs_module("openinference.instrumentation.agno")
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from agno.team import Team
    from openinference.instrumentation.agno import AgnoInstrumentor

    receiver = make_receiver()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:

        def model() -> OpenAIChat:
            return OpenAIChat(id="gpt-4o-mini", base_url=fake_openai.base_url, api_key="test-key")

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"

        def forecast(city: str) -> str:
            """A forecast that fails."""
            raise ValueError(f"no forecast for {city}")

        def scenario() -> dict[str, dict[str, Any]]:
            truth: dict[str, dict[str, Any]] = {}
            ok = Agent(name="weather_agent", model=model(), tools=[get_weather]).run("Weather?", session_id="s-ok")
            truth["weather_agent"] = {"usage": usage(ok), "tools": len(ok.tools), "tool_errors": 0, "calls": 2}
            bad = Agent(name="forecast_agent", model=model(), tools=[forecast]).run("Forecast?", session_id="s-bad")
            truth["forecast_agent"] = {
                "usage": usage(bad),
                "tools": len(bad.tools),
                "tool_errors": sum(bool(t.tool_call_error) for t in bad.tools),
                "calls": 2,
            }
            team = Team(
                name="support_team",
                model=model(),
                members=[Agent(name="billing_member", model=model(), tools=[get_weather])],
            )
            led = team.run("Weather in Paris?", session_id="s-team")
            members = led.member_responses
            assert len(members) == 1
            member_in, member_out = usage(members[0])
            truth["support_team"] = {
                "usage": (led.metrics.input_tokens + member_in, led.metrics.output_tokens + member_out),
                "tools": len(led.tools) + len(members[0].tools),  # the delegation is a tool call of the leader's
                "tool_errors": 0,
                "calls": 4,
                "steps": 1,  # the member agent, nested
            }
            return truth

        # in a context of its own: agno's instrumentation leaves its team span current when the team run ends,
        # and spans started later in this process (the next test module on this xdist worker) would join its
        # trace
        truth = contextvars.Context().run(scenario)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    runs = dict_rows(
        receiver,
        "SELECT agent_name, session_id, convention, status, provider_calls, tool_invocations, input_tokens, "
        "output_tokens, errors, steps FROM runs ORDER BY start_time",
    )
    assert [r["agent_name"] for r in runs] == ["weather_agent", "forecast_agent", "support_team"]
    for run in runs:
        expected = truth[run["agent_name"]]
        assert run["convention"] == "openinference"
        assert run["status"] == "ok"
        assert (run["input_tokens"], run["output_tokens"]) == expected["usage"], run["agent_name"]
        assert run["tool_invocations"] == expected["tools"], run["agent_name"]
        assert run["provider_calls"] == expected["calls"], run["agent_name"]
        assert run["errors"] == expected["tool_errors"], run["agent_name"]
    assert [r["session_id"] for r in runs] == ["s-ok", "s-bad", "s-team"]
    assert runs[2]["steps"] == truth["support_team"]["steps"]
    failed = dict_rows(receiver, "SELECT tool_name, is_error FROM tool_invocations WHERE is_error")
    assert failed == [{"tool_name": "forecast", "is_error": True}]
    providers = dict_rows(receiver, "SELECT DISTINCT provider, request_model FROM provider_calls")
    assert providers == [{"provider": "openai", "request_model": "gpt-4o-mini"}]
