"""Every Python program of docs/getting-started that needs no API key runs as written against a real receiver
(smolagents' against a local OpenAI-compatible server named by OPENAI_BASE_URL), and the run it sends is there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent.server.receiver import Receiver
from tests.conftest import dict_rows
from tests.derived_runs.fake_openai import FakeOpenAI

PAGES = Path(__file__).resolve().parents[2] / "docs" / "getting-started"
# page → the run's name in the runs view
RUNNABLE = {
    "pydantic-ai.md": "weather_agent",
    "langgraph.md": "weather_graph",
    "smolagents.md": "weather_agent",
    "openai-agents.md": "weather_agent",
}
# pages whose program is not Python run here (the Vercel AI SDK's is JavaScript): said so on the page
NOT_RUN = {"vercel-ai-sdk.md"}


def program(page: str) -> str:
    [code] = re.findall(r"^```python\n(.*?)^```", (PAGES / page).read_text(encoding="utf-8"), re.S | re.M)
    return code


def test_every_page_with_a_python_program_is_run_or_says_why_not() -> None:
    with_python = {p.name for p in PAGES.glob("*.md") if "```python" in p.read_text(encoding="utf-8")}
    assert with_python == set(RUNNABLE) | (NOT_RUN & with_python)
    for page in NOT_RUN:
        text = " ".join((PAGES / page).read_text(encoding="utf-8").split())
        assert re.search(r"not executed by the test suite|the test suite does not run", text), page


@pytest.mark.parametrize("page", sorted(RUNNABLE))
def test_the_program_sends_its_run(page: str, make_receiver, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(program(page), encoding="utf-8")
    receiver: Receiver = make_receiver()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{receiver.grpc_address}"}
    with FakeOpenAI() as server:
        env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = dict_rows(receiver, "SELECT workflow_name, agent_name, status, provider_calls FROM runs")
    assert len(runs) == 1, runs
    [run] = runs
    assert RUNNABLE[page] in (run["workflow_name"], run["agent_name"]), run
    assert run["status"] == "ok"
    assert run["provider_calls"] >= 1
