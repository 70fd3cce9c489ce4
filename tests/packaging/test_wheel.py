"""The package as a user installs it: a wheel built from the repository (pure Python: no Rust toolchain on
PATH), installed into a new virtual environment, runs ``otel-agent serve``, stores one span exported by the
OpenTelemetry SDK, and ``otel-agent runs`` reads it back — from a directory outside the repository, so nothing
is imported from the checkout. The venv sees the interpreter's site-packages for the dependencies (installing
them from an index is what ``pip install`` does; not repeated here), but the package itself is the wheel's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without the worktree on PYTHONPATH, without cargo (a pure-Python build)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".cargo" not in p)
    env["CARGO"] = "/nonexistent/cargo"
    return {**env, **extra}


def test_a_built_wheel_installs_serves_and_reads(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(ROOT)],
        capture_output=True, text=True, timeout=600, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = list(dist.glob("otel_agent-0.2.0-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("otel_agent/store/schema/010_spans.sql", "otel_agent/console/templates/runs.html"):
        assert data in names, data  # package data travels in the wheel
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("/LICENSE") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=300, env=clean_env(),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import otel_agent; print(otel_agent.__file__)"],
        capture_output=True, text=True, timeout=60, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(venv)), where

    otel_agent = str(venv / "bin" / "otel-agent")
    version = subprocess.run([otel_agent, "--version"], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert version.stdout.startswith("otel-agent 0.2.0, "), version

    grpc_port, http_port = free_port(), free_port()
    serve = subprocess.Popen(
        [otel_agent, "serve", "--grpc-endpoint", f"127.0.0.1:{grpc_port}", "--http-endpoint", f"127.0.0.1:{http_port}"],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        send = (
            "from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter\n"
            "from opentelemetry.sdk.trace import TracerProvider\n"
            "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
            "p = TracerProvider()\n"
            f"exporter = OTLPSpanExporter(endpoint='127.0.0.1:{grpc_port}', insecure=True)\n"
            "p.add_span_processor(SimpleSpanProcessor(exporter))\n"
            "with p.get_tracer('wheel').start_as_current_span('invoke_agent from_the_wheel',"
            " attributes={'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'from_the_wheel'}):\n"
            "    pass\n"
            "p.shutdown()\n"
        )
        deadline = time.monotonic() + 90
        while True:  # until the receiver listens and acknowledges the span
            sent = subprocess.run(
                [str(venv / "bin" / "python"), "-c", send], capture_output=True, text=True, timeout=60, env=clean_env()
            )
            runs = subprocess.run(
                [otel_agent, "runs", "--format", "json"], capture_output=True, text=True, timeout=60,
                env=clean_env(), cwd=tmp_path,
            )  # fmt: skip
            if runs.returncode == 0 and json.loads(runs.stdout):
                break
            assert time.monotonic() < deadline, (sent.stderr[-2000:], runs.stderr)
            time.sleep(1)
        [run] = json.loads(runs.stdout)[:1]
        assert run["workflow"] or run["run_id"]
        assert run["status"] == "ok"
    finally:
        serve.send_signal(signal.SIGTERM)
        output = serve.communicate(timeout=60)[0]
    assert serve.returncode == 0, output
    assert "Traceback" not in output
