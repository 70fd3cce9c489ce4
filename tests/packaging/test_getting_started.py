"""Every program of docs/getting-started runs as written against a real receiver and a local OpenAI-compatible
server named by OPENAI_BASE_URL, and the run it sends is there: the Python pages with this interpreter, the Vercel AI
SDK page's JavaScript programs with node and the packages of tests/vercel_ai/node (``npm ci``), one per line of the
SDK (v6 ``ai.*`` telemetry, v7 ``@ai-sdk/otel``), each resolving ``ai`` and ``@ai-sdk/openai`` to its line."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent.server.receiver import Receiver
from tests.conftest import dict_rows
from tests.derived_runs.fake_openai import DATED_SUFFIX, FakeOpenAI
from tests.fidelity3.fake_stream import FakeStreamingOpenAI
from tests.tools import missing_tool

PAGES = Path(__file__).resolve().parents[2] / "docs" / "getting-started"
# page → the run's name in the runs view
RUNNABLE = {
    "pydantic-ai.md": "weather_agent",
    "langgraph.md": "weather_graph",
    "smolagents.md": "weather_agent",
    "openai-agents.md": "weather_agent",
}
# pages whose program is not Python: run by their own test below
NOT_PYTHON = {"vercel-ai-sdk.md"}
NODE_DIR = Path(__file__).resolve().parents[1] / "vercel_ai" / "node"
# the Vercel page's JavaScript programs, in page order: the AI SDK line each is written for → the installed package
# directories (tests/vercel_ai/node/node_modules, where both lines sit under aliases) that its imports resolve to
VERCEL_LINES = {
    "v6": {"ai": "ai-v6", "@ai-sdk/openai": "@ai-sdk/openai-v3"},
    "v7": {"ai": "ai", "@ai-sdk/openai": "@ai-sdk/openai"},
}


def programs(page: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", (PAGES / page).read_text(encoding="utf-8"), re.S | re.M)


def program(page: str) -> str:
    [code] = programs(page, "python")
    return code


def test_every_page_with_a_program_is_run() -> None:
    with_python = {p.name for p in PAGES.glob("*.md") if "```python" in p.read_text(encoding="utf-8")}
    assert with_python == set(RUNNABLE)
    with_js = {p.name for p in PAGES.glob("*.md") if re.search(r"^```(js|ts|javascript)", p.read_text(), re.M)}
    assert with_js == NOT_PYTHON
    assert len(programs("vercel-ai-sdk.md", "js")) == len(VERCEL_LINES)


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


def node_modules_for(line: str, into: Path) -> Path:
    """A node_modules directory of links into tests/vercel_ai/node/node_modules, with ``ai`` and
    ``@ai-sdk/openai`` linked to ``line``'s packages: the program's imports resolve as in a project that installed
    that line (node follows the links to the real directories, so each package's own dependencies resolve there)."""
    installed = NODE_DIR / "node_modules"
    modules = into / "node_modules"
    names = [
        f"{scope.name}/{p.name}" if scope.name.startswith("@") else scope.name
        for scope in installed.iterdir()
        if not scope.name.startswith(".")
        for p in (scope.iterdir() if scope.name.startswith("@") else [scope])
    ]
    for name in names:
        target = installed / VERCEL_LINES[line].get(name, name)
        (modules / name).parent.mkdir(parents=True, exist_ok=True)
        (modules / name).symlink_to(target, target_is_directory=True)
    for name, package in VERCEL_LINES[line].items():
        (modules / name).unlink()
        (modules / name).symlink_to(installed / package, target_is_directory=True)
    return modules


@pytest.mark.parametrize("line", sorted(VERCEL_LINES))
def test_the_vercel_ai_sdk_page_sends_its_run(line: str, make_receiver, tmp_path: Path) -> None:
    """The page's program for ``line``, as written, with the environment a user sets: OTEL_EXPORTER_OTLP_ENDPOINT
    (the receiver's HTTP port), OPENAI_BASE_URL and OPENAI_API_KEY. The default ``openai(model)`` provider calls
    the Responses API (answered by the fake server, not streamed)."""
    node = shutil.which("node")
    if node is None:
        missing_tool("node", "node is not installed (Node 20+)")
    if not (NODE_DIR / "node_modules" / "ai-v6").is_dir():
        missing_tool("npm", f"the Node scenario's packages are not installed: (cd {NODE_DIR} && npm ci)")
    code = programs("vercel-ai-sdk.md", "js")[sorted(VERCEL_LINES).index(line)]
    node_modules_for(line, tmp_path)
    (tmp_path / "agent.mjs").write_text(code, encoding="utf-8")
    receiver: Receiver = make_receiver()
    with FakeStreamingOpenAI() as server:
        env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.http_address,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test-key",
        }
        done = subprocess.run([node, "agent.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "It is sunny in Paris."
    assert [r["path"] for r in requests] == ["/v1/responses"]
    runs = dict_rows(
        receiver,
        "SELECT run_id, workflow_name, agent_name, service_name, status, provider_calls, tool_invocations, "
        "input_tokens, output_tokens, errors FROM runs",
    )
    assert len(runs) == 1, runs
    [run] = runs
    assert "weather_agent" in (run["workflow_name"], run["agent_name"]), run
    # the fake server's usage for one input item: 110 in, 20 out
    assert {k: run[k] for k in ("service_name", "status", "provider_calls", "tool_invocations", "errors")} == {
        "service_name": "my-agent",
        "status": "ok",
        "provider_calls": 1,
        "tool_invocations": 0,
        "errors": 0,
    }
    assert (run["input_tokens"], run["output_tokens"]) == (110, 20)
    calls = dict_rows(
        receiver,
        "SELECT provider, request_model, response_model, input_tokens, output_tokens FROM provider_calls "
        "WHERE run_id = ?",
        [run["run_id"]],
    )
    assert calls == [
        {
            "provider": "openai",
            "request_model": "gpt-4o-mini",
            "response_model": "gpt-4o-mini" + DATED_SUFFIX,
            "input_tokens": 110,
            "output_tokens": 20,
        }
    ]
