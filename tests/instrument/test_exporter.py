"""DuckDBSpanExporter keeps the SpanExporter contract: a storage failure is a logged FAILURE, never an exception
into the SDK; the agent keeps running; what was acknowledged is stored; shutdown checkpoints.

The failures are real: a small tmpfs that fills up (in a private mount namespace, ``unshare -rm``), or the
process's file-size limit (RLIMIT_FSIZE), under the real SDK span processors and a real DuckDB file."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent import DuckDBSpanExporter
from tests.tools import missing_tool

HERE = Path(__file__).resolve().parent
AGENT = HERE / "exporter_agent.py"


def run_agent(command: list[str]) -> tuple[dict[str, Any], str]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return probe.returncode == 0


def check_contract(out: dict[str, Any], stderr: str, os_error: str) -> None:
    assert out["done"] == 60  # the agent never saw an exception
    results = [r for r, _ in out["results"]]
    assert set(results) == {"SUCCESS", "FAILURE"}, results
    assert results[0] == "SUCCESS"
    failures = [line for line in stderr.splitlines() if "could not store" in line]
    assert len(failures) == results.count("FAILURE")
    assert all(line.startswith("ERROR otel_agent.exporter:") and os_error in line for line in failures)
    assert "Traceback" not in stderr
    assert "Exception while exporting" not in stderr
    acknowledged = sorted(name for r, names in out["results"] if r == "SUCCESS" for name in names)
    assert out["stored"] == acknowledged  # every acknowledged span is there, nothing that failed is
    exported = sorted(name for _, names in out["results"] for name in names)
    assert exported == [f"work {i:02d}" for i in range(60)]  # every span reached the exporter once


@pytest.mark.parametrize("processor", ["simple", "batch"])
def test_file_size_limit_is_a_logged_failure_and_the_agent_runs_on(tmp_path: Path, processor: str) -> None:
    out, stderr = run_agent([sys.executable, str(AGENT), "fsize", processor, str(tmp_path)])
    check_contract(out, stderr, "File too large")


def test_full_disk_is_a_logged_failure_and_shutdown_logs_the_failed_checkpoint(tmp_path: Path) -> None:
    if not can_unshare():
        missing_tool("unshare", "needs a private mount namespace (unshare -rm) to mount a tmpfs")
    mount = tmp_path / "small"
    mount.mkdir()
    script = f'mount -t tmpfs -o size=1m tmpfs "$1" && exec "{sys.executable}" "{AGENT}" tmpfs batch "$1"'
    out, stderr = run_agent(["unshare", "-rm", "sh", "-c", script, "sh", str(mount)])
    check_contract(out, stderr, "No space left on device")
    # the checkpoint cannot grow the full file: logged, and the WAL kept the acknowledged spans (checked above)
    checkpoint = [line for line in stderr.splitlines() if "checkpoint at shutdown failed" in line]
    assert len(checkpoint) == 1
    assert "No space left on device" in checkpoint[0]


def finished_spans(n: int) -> list:
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    for i in range(n):
        with provider.get_tracer("t").start_as_current_span(f"s{i}"):
            pass
    return list(memory.get_finished_spans())


def test_shutdown_checkpoints_and_export_after_it_is_a_logged_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "e.duckdb"
    exporter = DuckDBSpanExporter(path)
    assert exporter.export(finished_spans(3)) == SpanExportResult.SUCCESS
    assert os.path.getsize(str(path) + ".wal") > 0  # committed, not yet checkpointed
    exporter.shutdown()
    assert not os.path.exists(str(path) + ".wal")  # checkpointed into the file
    with caplog.at_level(logging.WARNING, logger="otel_agent.exporter"):
        assert exporter.export(finished_spans(2)) == SpanExportResult.FAILURE
        exporter.shutdown()  # a second shutdown is harmless
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [f"DuckDBSpanExporter({path}) is shut down: 2 spans not exported"]
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT name FROM spans ORDER BY name").fetchall() == [("s0",), ("s1",), ("s2",)]
    con.close()
