"""Logfire's own SDK (a real third-party instrumentation) sends pending spans for spans as they start: a run it
traces is listed as ``running`` while its agent span is open, and ``ok`` with the same counts once it ends (the
pending span is read as its span in progress, never counted twice). docs/views-runs.md "Runs in progress"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.maintained_support import assert_same_runs, wait_maintained

AGENT = Path(__file__).with_name("logfire_agent.py")
pytest.importorskip("logfire")


def runs_now(receiver: Any) -> list[dict[str, Any]]:
    wait_maintained(f"http://127.0.0.1:{receiver.http_port}", receiver.con)
    return assert_same_runs(receiver.con)


def test_a_logfire_run_is_running_while_its_agent_span_is_open(make_receiver: Any) -> None:
    receiver = make_receiver()
    agent = subprocess.Popen(
        [sys.executable, str(AGENT), f"http://127.0.0.1:{receiver.http_port}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        assert agent.stdin is not None
        assert agent.stdout.readline().strip() == "STARTED"
        pending = receiver.con.execute(
            "SELECT name FROM spans WHERE attributes->>'logfire.span_type' = 'pending_span'"
        ).fetchall()
        (during,) = runs_now(receiver)
        agent.stdin.write("\n")
        agent.stdin.flush()
        _, err = agent.communicate(timeout=60)
    finally:
        agent.kill()
    assert agent.returncode == 0, err
    (after,) = runs_now(receiver)

    assert ("invoke_agent support",) in pending  # Logfire announced the agent span
    assert (during["status"], during["agent_name"], during["provider_calls"], during["span_count"]) == (
        "running",
        "support",
        1,
        2,
    )
    assert during["service_name"] == "logfire-agent"
    assert (after["run_id"], after["status"], after["provider_calls"], after["span_count"]) == (
        during["run_id"],
        "ok",
        1,
        2,
    )
    assert after["input_tokens"] == 10
