"""A2A (issue 32): a calling agent and a remote agent of the `a2a-sdk`, each in its own process, over JSON-RPC on
loopback HTTP, with a2a-sdk's own tracing and the published A2A instrumentation (splunk-ao-a2a's A2AInstrumentor).

What a2a-sdk sends by itself (its ``a2a.utils.telemetry`` decorators) is function spans named after the Python
methods, with no A2A attribute and no trace context across the wire. The published instrumentation adds one span
per ``send_message`` on each side (``gen_ai.operation.name = invoke_agent``, ``a2a.task.id``, ``a2a.task.state``
(the task's last state seen), ``a2a.context_id`` and ``gen_ai.conversation.id``), carries the caller's trace
context in the message metadata and parents the server's span on it.

Ground truth: the tasks as the client received them (id, context, final state). Against the views: one run (the
caller's), the server's spans in it; each task one operation in ``receipt_state`` (completed → waiting for
verification, failed → outcome_failed, input-required → waiting for input), delegated by the caller's service
and accepted by the remote agent's; the context is the run's conversation. The caller's spans reach the receiver
twice (an exporter's retry): nothing changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import dict_rows, free_port, start_receiver
from tests.fidelity3.resend import TwiceForwarder
from tests.tools import needs_module

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, Any]]]:
    needs_module("a2a")
    needs_module("splunk_ao_a2a")
    receiver = start_receiver(tmp_path_factory.mktemp("a2a") / "a2a.duckdb")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fidelity3.a2a_server", str(port), receiver.http_address + "/v1/traces"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "ready", server.stderr
        with TwiceForwarder(receiver.http_address) as forwarder:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tests.fidelity3.a2a_client",
                    f"http://127.0.0.1:{port}/",
                    forwarder.url + "/v1/traces",
                ],
                cwd=ROOT,
                env=ENV,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert forwarder.forwarded > 0
        assert done.returncode == 0, done.stderr[-4000:]
        truth = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=60)
    try:
        yield receiver, truth
    finally:
        receiver.stop()


STATES = {
    # the task's last state as the client saw it → its receipt (docs/views-evidence.md, "Third-party receipts")
    "completed": {"state": "waiting", "waiting_for": "verification", "failure_reason": None},
    "failed": {"state": "outcome_failed", "waiting_for": None, "failure_reason": "failed"},
    "input-required": {"state": "waiting", "waiting_for": "input", "failure_reason": None},
}


def test_a2a_delegation_across_processes(scenario: tuple[Any, dict[str, Any]]) -> None:
    receiver, truth = scenario
    tasks = truth["tasks"]
    assert [t["state"] for t in tasks] == ["completed", "failed", "input-required"]
    assert {t["context_id"] for t in tasks} == {truth["context_id"]}

    # one run, the caller's, in the A2A context as its conversation; the failed task is its one error (the server's
    # span where it began; the client's span of the call, in error too, is its way up). a2a-sdk's own spans outside
    # the instrumentation's (the JSON-RPC handler's, the transport's close), alone in traces of their own, are no
    # runs, and its end-of-queue signal is no failure (class: a control-flow exception is not an error)
    runs = dict_rows(receiver, "SELECT run_id, agent_name, session_id, status, errors FROM runs")
    assert runs == [
        {
            "run_id": truth["trace_id"],
            "agent_name": "trip_planner",
            "session_id": truth["context_id"],
            "status": "ok",
            "errors": sum(t["state"] == "failed" for t in tasks),
        }
    ]
    sessions = dict_rows(receiver, "SELECT session_id, runs FROM sessions")
    assert sessions == [{"session_id": truth["context_id"], "runs": 1}]
    # the remote agent's spans, in another process, join the caller's run through the context in the metadata
    server = dict_rows(
        receiver,
        "SELECT run_id, agent_name, category, is_error_origin FROM classified_spans "
        "WHERE service_name = 'a2a-travel-server' AND span_name = 'a2a.server.on_message_send' ORDER BY start_time",
    )
    assert server == [
        {
            "run_id": truth["trace_id"],
            "agent_name": "travel_agent",
            "category": "step",
            "is_error_origin": t["state"] == "failed",
        }
        for t in tasks
    ]

    # each task one operation in the receipt model: delegated by the caller, accepted by the remote agent
    attempts = {
        r["operation_id"]: r
        for r in dict_rows(
            receiver,
            "SELECT operation_id, state, waiting_for, failure_reason, delegator, acceptors, source, "
            "delegated_at < accepted_at AS acked_after FROM receipt_attempts",
        )
    }
    assert sorted(attempts) == sorted(t["id"] for t in tasks)
    for task in tasks:
        assert {k: attempts[task["id"]][k] for k in ("state", "waiting_for", "failure_reason")} == STATES[task["state"]]
        assert attempts[task["id"]]["delegator"] == "a2a-trip-client"
        assert attempts[task["id"]]["acceptors"] == ["a2a-travel-server"]
        assert attempts[task["id"]]["source"] == "a2a"
        assert attempts[task["id"]]["acked_after"] is True
    states = dict_rows(receiver, "SELECT operation_id, state FROM receipt_state ORDER BY operation_id")
    assert states == sorted(
        ({"operation_id": t["id"], "state": STATES[t["state"]]["state"]} for t in tasks),
        key=lambda r: r["operation_id"],
    )
    # the caller's spans arrived twice: each transition is there once
    transitions = dict_rows(
        receiver,
        "SELECT transition, service_name FROM receipt_transitions WHERE operation_id = ? ORDER BY transition, "
        "service_name",
        [tasks[0]["id"]],
    )
    assert transitions == [
        {"transition": "accepted", "service_name": "a2a-travel-server"},
        {"transition": "completed", "service_name": "a2a-travel-server"},
        {"transition": "completed", "service_name": "a2a-trip-client"},
        {"transition": "delegated", "service_name": "a2a-trip-client"},
    ]
