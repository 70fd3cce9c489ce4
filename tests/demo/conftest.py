"""The demo, run once per mode for the whole folder (each run starts a worker process; keep the folder fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_agent.demo.runner import DemoResult, run_demo


@pytest.fixture(scope="session")
def otlp_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    """The demo through real OTLP/gRPC into an in-process receiver; the receiver is stopped (file closed)."""
    return run_demo(str(Path(tmp_path_factory.mktemp("demo_otlp")) / "demo.duckdb"))


@pytest.fixture(scope="session")
def embedded_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    """The demo through the embedded DuckDBSpanExporter (worker spans relayed over its stdout)."""
    return run_demo(str(Path(tmp_path_factory.mktemp("demo_embedded")) / "demo.duckdb"), embedded=True)


@pytest.fixture(params=["otlp", "embedded"])
def demo(request: pytest.FixtureRequest) -> DemoResult:
    return request.getfixturevalue(f"{request.param}_demo")
