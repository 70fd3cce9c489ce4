"""The CLI as a person uses it: real ``otel-agent`` processes (start-up failures) and real commands over real
store files. ``cli_store`` is one run written with our helpers plus one third-party-style span, chosen for the
rendering rules: a long excerpt with control characters, a cost of $0.000075, a failed tool without an error
type but with a status message."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import otel_agent.instrument as oi
from otel_agent.main import cli
from tests.derived_runs.runs_support import write_store

ROOT = Path(__file__).resolve().parents[2]
RUN_ID = "run_cli"
CLAIM_ID = "claim_cli_long"
EVIDENCE_ID = "ev_cli_long"
ARTIFACT_ID = "art_cli_report"
# 300 characters with an escape sequence and a newline inside: hostile to a terminal, and too long for a cell
EXCERPT = "Graph orchestration \x1b[31mred\x1b[0m adoption\nrose " + "steadily " * 30 + "THE-END"
TOOL_STATUS_MESSAGE = "HTTP 503 from upstream fetch service"


def cli_spans() -> list:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with (
        oi.use_tracer_provider(provider),
        oi.flow_run("cli_workflow", run_id=RUN_ID, agent_name="cli_agent"),
        oi.step("gather", step_id=f"{RUN_ID}_gather"),
    ):
        with oi.provider_call("openai", "gpt-4o-mini", input_artifacts=["requirement.json"]) as call:
            call.set_cost(0.000075)
        src = oi.source("https://example.org/survey", title="Survey", source_id="src_cli")
        oi.evidence_item(src, EXCERPT, confidence="high", evidence_id=EVIDENCE_ID)
        oi.claim("Graph orchestration is common.", confidence="high", claim_id=CLAIM_ID)
        oi.citation(CLAIM_ID, EVIDENCE_ID, citation_id="cit_cli_1")
        # a third-party tool span (GenAI conventions) failing without error.type: error_type is _OTHER
        tracer = provider.get_tracer("third.party.tools")
        with tracer.start_as_current_span("execute_tool fetch") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", "fetch")
            span.set_status(Status(StatusCode.ERROR, TOOL_STATUS_MESSAGE))
        report = oi.create_artifact("CLI report", artifact_type="markdown_report", artifact_id=ARTIFACT_ID)
        report.add_version("# CLI report\n- Graph orchestration is common.", version_id="artv_cli_1")
        oi.repair("SHORTEN", applied=False, iteration=1, from_version_id="artv_cli_1", repair_id="rep_cli")
    provider.shutdown()
    return list(exporter.get_finished_spans())


@pytest.fixture(scope="session")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    return write_store(tmp_path_factory.mktemp("cli") / "cli.duckdb", cli_spans())


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str


def invoke(*args: str, code: int = 0, env: dict[str, str] | None = None) -> Ran:
    """Run the real command in-process (click's runner: parsing, the command body, the output)."""
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == code, (args, result.output, result.exception)
    return Ran(result.exit_code, result.stdout, result.stderr)


def run_process(*args: str, timeout: float = 60, env: dict[str, str] | None = None, cwd: Path | None = None) -> Ran:
    """``python -m otel_agent ARGS`` as a separate process."""
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "otel_agent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=cwd,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def assert_one_line_failure(ran: Ran, *fragments: str) -> str:
    """Exit code 2, one line on stderr naming every fragment, no traceback."""
    lines = ran.stderr.strip().splitlines()
    assert ran.code == 2, ran
    assert len(lines) == 1, ran.stderr
    assert "Traceback" not in ran.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]
