"""JavaScript agents on the Vercel AI SDK (issue 32, class 6 and 7 on real spans), in both telemetry styles, each
through the OpenTelemetry JS SDK's OTLP/HTTP exporter to a receiver on loopback, against the fake
OpenAI-compatible server (streaming included) of tests/fidelity3/fake_stream.py:

- ``v6``: the v6 line (`ai@6`, `@ai-sdk/openai@3`) with `experimental_telemetry` — the `ai.*` spans
  (`ai.generateText` → `ai.generateText.doGenerate` / `ai.toolCall`, `ai.streamText.doStream`), provider id
  `openai.chat`, user metadata in `ai.telemetry.metadata.*`;
- ``v7``: the v7 line with `@ai-sdk/otel` (`registerTelemetry(new OpenTelemetry())`) — GenAI-convention spans
  (`invoke_agent`, `agent_step`, `chat`, `execute_tool`, `gen_ai.client.operation.time_to_first_chunk`).

Ground truth is what the SDK itself returns (tests/vercel_ai/node/agent.mjs prints it): per run the steps (model
round trips), tool calls, total usage and the tool error. The packages come from the committed lockfile
(`npm ci`, scripts/test.sh).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import dict_rows
from tests.fidelity3.fake_stream import FakeStreamingOpenAI
from tests.fidelity3.resend import TwiceForwarder
from tests.tools import missing_tool

NODE_DIR = Path(__file__).parent / "node"


@pytest.fixture
def fake_openai() -> Iterator[FakeStreamingOpenAI]:
    with FakeStreamingOpenAI() as server:
        yield server


def run_agent(style: str, receiver: Any, server: FakeStreamingOpenAI, endpoint: str | None = None) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        missing_tool("node", "node is not installed (Node 20+)")
    if not (NODE_DIR / "node_modules" / "ai-v6").is_dir():
        missing_tool("npm", f"the Node scenario's packages are not installed: (cd {NODE_DIR} && npm ci)")
    done = subprocess.run(
        [node, "agent.mjs", style, (endpoint or receiver.http_address) + "/v1/traces", server.base_url],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


RUNS_SQL = (
    "SELECT run_id, workflow_name, agent_name, convention, status, provider_calls, tool_invocations, input_tokens, "
    "output_tokens, errors, metadata FROM runs ORDER BY start_time"
)


def check_against_truth(receiver: Any, truth: dict[str, Any], *, names: str) -> list[dict[str, Any]]:
    runs = dict_rows(receiver, RUNS_SQL)
    assert len(runs) == len(truth["runs"])
    for run, expected in zip(runs, truth["runs"], strict=True):
        assert run[names] == expected["name"]
        assert run["status"] == "ok"  # the SDK recovers from the tool error: the model answers
        assert run["provider_calls"] == expected["steps"]
        assert run["tool_invocations"] == expected["tool_calls"]
        assert (run["input_tokens"], run["output_tokens"]) == (expected["usage"]["input"], expected["usage"]["output"])
        assert run["errors"] == (1 if expected["error"] else 0)
    failing = next(r for r, e in zip(runs, truth["runs"], strict=True) if e["error"])
    errors = dict_rows(
        receiver,
        "SELECT tool_name, error_type FROM tool_invocations WHERE is_error AND run_id = ?",
        [failing["run_id"]],
    )
    assert errors == [{"tool_name": "lookup", "error_type": next(e["error"] for e in truth["runs"] if e["error"])}]
    return runs


def test_vercel_ai_v6_ai_telemetry(make_receiver: Any, fake_openai: FakeStreamingOpenAI) -> None:
    """Class 6: ai.toolCall spans are tools, the function id names the run, 'openai.chat' is openai, the root's
    ai.usage.* is not counted again, metadata is in runs and calls; class 7: msToFirstChunk, streamed."""
    receiver = make_receiver()
    truth = run_agent("v6", receiver, fake_openai)
    runs = check_against_truth(receiver, truth, names="workflow_name")
    assert {r["convention"] for r in runs} == {"vercel_ai"}
    assert [r["metadata"] for r in runs] == [
        {"tenant": "acme", "user_id": "u-42"},
        {"user_id": "u-7"},
        {"user_id": "u-9"},
    ]
    calls = dict_rows(
        receiver,
        "SELECT c.provider, c.request_model, c.request_stream, c.time_to_first_chunk_ms > 0 AS ttfc, "
        "c.metadata['user_id'] AS user_id, r.workflow_name FROM provider_calls c JOIN runs r USING (run_id) "
        "ORDER BY c.start_time",
    )
    assert {c["provider"] for c in calls} == {"openai"}
    streamed = [c for c in calls if c["workflow_name"] == "stream-agent"]
    assert streamed == [
        {
            "provider": "openai",
            "request_model": "gpt-4o-mini",
            "request_stream": True,
            "ttfc": True,
            "user_id": "u-7",
            "workflow_name": "stream-agent",
        }
    ]
    assert all(c["request_stream"] is None for c in calls if c["workflow_name"] != "stream-agent")
    tools = dict_rows(receiver, "SELECT tool_name, tool_call_id FROM tool_invocations ORDER BY start_time")
    assert [t["tool_name"] for t in tools] == ["get_weather", "lookup"]
    assert all(t["tool_call_id"].startswith("call_") for t in tools)
    # priced from the table: gpt-4o-mini, cached input at its cache rate
    assert all(r["cost_usd"] > 0 for r in dict_rows(receiver, "SELECT cost_usd FROM runs"))


def test_vercel_ai_v7_otel_integration(make_receiver: Any, fake_openai: FakeStreamingOpenAI) -> None:
    """@ai-sdk/otel: GenAI conventions (invoke_agent root named by the function id, agent_step steps), and the time
    to first chunk under the metric's name gen_ai.client.operation.time_to_first_chunk."""
    receiver = make_receiver()
    truth = run_agent("v7", receiver, fake_openai)
    runs = check_against_truth(receiver, truth, names="agent_name")
    assert {r["convention"] for r in runs} == {"gen_ai"}
    steps = dict_rows(receiver, "SELECT r.agent_name, r.steps FROM runs r ORDER BY start_time")
    assert [s["steps"] for s in steps] == [t["steps"] for t in truth["runs"]]
    streamed = dict_rows(
        receiver,
        "SELECT c.request_stream, c.time_to_first_chunk_ms > 0 AS ttfc FROM provider_calls c JOIN runs r "
        "USING (run_id) WHERE r.agent_name = 'stream-agent'",
    )
    assert streamed == [{"request_stream": True, "ttfc": True}]


def test_vercel_ai_resent_spans_change_nothing(make_receiver: Any, fake_openai: FakeStreamingOpenAI) -> None:
    """Every export request of the JS SDK delivered twice (a retry after a lost acknowledgement): the same rows as
    the run delivered once."""
    once, twice = make_receiver(), make_receiver()
    run_agent("v6", once, fake_openai)
    with TwiceForwarder(twice.http_address) as forwarder:
        run_agent("v6", twice, fake_openai, endpoint=forwarder.url)
    assert forwarder.forwarded > 0
    columns = "workflow_name, status, provider_calls, tool_invocations, input_tokens, output_tokens, errors, metadata"
    assert dict_rows(twice, f"SELECT {columns} FROM runs ORDER BY workflow_name") == dict_rows(
        once, f"SELECT {columns} FROM runs ORDER BY workflow_name"
    )
