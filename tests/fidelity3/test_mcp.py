"""MCP (issue 32): an MCP client and server pair of the official `mcp` SDK, each in its own process with its own
tracer provider, the SDK's own tracing (client `MCP send tools/call X`, server `tools/call X` with
`gen_ai.operation.name = execute_tool`, W3C context in the request's `_meta`) and the published OpenInference MCP
instrumentation on the client; both export over OTLP/HTTP to one receiver on loopback.

Ground truth (the client's own record of the calls it made and their results) against the views: each
`tools/call` is one tool invocation of the agent's run, counted once although the client and the server both
record it; the server's span, in another process, joins the caller's run through the trace context; the tool
the server failed is the run's one error, shown on the client's tool row too (the client's span of the call carries
no error: the answer's isError is on the server's span); the session's bookkeeping (`initialize`,
`notifications/initialized` in traces of their own) makes no run. Re-sent spans change nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from otel_agent.read.runs import run_errors
from otel_agent.read.source import CursorSource
from otel_agent.store.database import store_cursor
from tests.conftest import dict_rows
from tests.fidelity3.resend import TwiceForwarder
from tests.tools import needs_module

ROOT = Path(__file__).resolve().parents[2]


def run_client(endpoint: str) -> dict[str, Any]:
    needs_module("mcp")
    needs_module("openinference.instrumentation.mcp")
    done = subprocess.run(
        [sys.executable, "-m", "tests.fidelity3.mcp_client", endpoint + "/v1/traces"],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


RUNS = "SELECT run_id, agent_name, status, tool_invocations, errors, spans_in_error FROM runs"


def test_mcp_client_server_pair(make_receiver: Any) -> None:
    receiver = make_receiver()
    truth = run_client(receiver.http_address)
    calls = truth["tool_calls"]
    assert [c["name"] for c in calls] == ["get_weather", "get_forecast"]
    assert [c["is_error"] for c in calls] == [False, True]

    # one run: the agent's; initialize / notifications/initialized, alone in their traces, are bookkeeping
    runs = dict_rows(receiver, RUNS)
    assert runs == [
        {
            "run_id": truth["trace_id"],
            "agent_name": "weather_agent",
            "status": "ok",
            "tool_invocations": len(calls),
            "errors": sum(c["is_error"] for c in calls),
            # the failed call's counted row is the client's, in error with the server's answer (the server's own
            # span in error is nested under it: a duplicate, not counted)
            "spans_in_error": 1,
        }
    ]
    tools = dict_rows(
        receiver,
        "SELECT tool_name, convention, span_name, is_error, error_type FROM tool_invocations ORDER BY start_time",
    )
    assert [t["tool_name"] for t in tools] == [c["name"] for c in calls]
    assert {t["convention"] for t in tools} == {"mcp"}  # the client's span is the counted one
    # the tool result's isError, recorded on the server's span only, shows on the client's tool row
    assert [(t["is_error"], t["error_type"]) for t in tools] == [
        (False, None) if not c["is_error"] else (True, "tool_error") for c in calls
    ]
    # and in the tool health view, which counts the same calls
    usage = dict_rows(receiver, "SELECT tool_name, calls, errors FROM tool_usage ORDER BY tool_name")
    assert usage == [
        {"tool_name": c["name"], "calls": 1, "errors": int(c["is_error"])}
        for c in sorted(calls, key=lambda c: c["name"])
    ]
    # the run's errors (the read layer's, as `otel-agent run`, the console and MCP's get_run list them): the server's
    # span where the failure began, then the client's tool call it failed, one failure
    with store_cursor(receiver.con) as cursor:
        errors = run_errors(CursorSource(cursor), truth["trace_id"])
    assert [(e["span_name"], e["is_error_origin"], e["error_type"]) for e in errors] == [
        ("tools/call get_forecast", True, "tool_error"),
        ("MCP send tools/call get_forecast", False, "tool_error"),
    ]
    # the server's spans (another process, another service) are in the caller's run, nested under the client's
    server = dict_rows(
        receiver,
        "SELECT tool_name, nested_call, run_id, is_error, error_type, jsonrpc_request_id IS NOT NULL AS has_id "
        "FROM classified_spans WHERE service_name = 'mcp-weather-server' AND category = 'tool_invocation' "
        "ORDER BY start_time",
    )
    assert server == [
        {
            "tool_name": "get_weather",
            "nested_call": True,
            "run_id": truth["trace_id"],
            "is_error": False,
            "error_type": None,
            "has_id": True,
        },
        {
            "tool_name": "get_forecast",
            "nested_call": True,
            "run_id": truth["trace_id"],
            "is_error": True,
            "error_type": "tool_error",
            "has_id": True,
        },
    ]
    # the bookkeeping traces stay visible
    assert dict_rows(receiver, "SELECT count(DISTINCT trace_id) > 1 AS more FROM classified_spans") == [{"more": True}]


def test_mcp_resent_spans_change_nothing(make_receiver: Any) -> None:
    receiver = make_receiver()
    with TwiceForwarder(receiver.http_address) as forwarder:
        truth = run_client(forwarder.url)
    assert forwarder.forwarded > 0
    runs = dict_rows(receiver, RUNS)
    assert len(runs) == 1
    assert runs[0]["tool_invocations"] == len(truth["tool_calls"])
    assert runs[0]["errors"] == 1
