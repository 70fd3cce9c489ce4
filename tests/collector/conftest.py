"""Fixtures for the end-to-end tests through a real OpenTelemetry Collector (loopback only).

The Collector is the distribution built by ``scripts/build_collector.sh`` (CI builds it before the tests);
tests that need it skip, with the reason, only when it is absent. Receivers run in this process
(``make_receiver`` from tests/conftest.py) so they start in milliseconds; the Collector and the shard
query are real subprocesses.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from otel_agent.server.receiver import Receiver
from tests.collector_binary import (
    CONFIG_DIR,
    collector_binary,
    expected_binary_path,
    start_collector,
    stop_collector,
)
from tests.conftest import free_port, rows
from tests.tools import missing_tool

# Short timers so a test takes seconds: the batch processor flushes every 50 ms and the exporter's first
# retry comes after 100 ms (a RetryInfo from the receiver overrides that with its own hint).
FAST_ENV = {
    "COLLECTOR_BATCH_TIMEOUT": "50ms",
    "OTEL_AGENT_RETRY_INITIAL_INTERVAL": "100ms",
    "OTEL_AGENT_RETRY_MAX_INTERVAL": "2s",
    "OTEL_AGENT_RETRY_MAX_ELAPSED": "120s",
    "OTEL_AGENT_EXPORT_TIMEOUT": "10s",
    "COLLECTOR_LOG_LEVEL": "info",
    "COLLECTOR_METRICS_LEVEL": "none",
}

# Lines the Collector logs when it gives data up (permanent error, retries exhausted, queue full).
DROP_MARKERS = ("Dropping data", "dropped_items", "Exporting failed. Rejecting data", "sending queue is full")


class Collector:
    """A running Collector: its OTLP endpoints (for the SDK exporters) and its log."""

    def __init__(self, proc: subprocess.Popen[bytes], grpc: str, http: str) -> None:
        self.proc = proc
        self.grpc_endpoint = grpc  # host:port, for the gRPC exporters
        self.http_url = f"http://{http}"  # for the HTTP exporters: + /v1/traces etc.

    @property
    def log(self) -> str:
        return Path(self.proc.log_path).read_text(errors="replace")  # type: ignore[attr-defined]

    def stop(self) -> int:
        return stop_collector(self.proc)

    def assert_nothing_dropped(self) -> None:
        log = self.log
        found = [m for m in DROP_MARKERS if m in log]
        assert not found, f"the Collector dropped data ({found}); log tail:\n{log[-4000:]}"


@pytest.fixture(scope="session")
def collector_bin() -> Path:
    binary = collector_binary()
    if binary is None:
        override = os.environ.get("OTEL_AGENT_COLLECTOR_BIN")
        where = (
            f"OTEL_AGENT_COLLECTOR_BIN={override} is not an executable"
            if override
            else (f"looked for {expected_binary_path()}")
        )
        missing_tool(
            "collector", f"OpenTelemetry Collector not built ({where}): run `bash scripts/build_collector.sh` first"
        )
    return binary


@pytest.fixture
def make_collector(
    collector_bin: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Collector]]:
    """Start Collectors with a config from collector_config/ and env overrides; stopped at teardown.

    On a failing test the tail of each Collector's log is printed (pytest shows it with the failure).
    """
    started: list[Collector] = []

    def start(config: str, **env: str) -> Collector:
        grpc, http = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
        full_env = {**FAST_ENV, "COLLECTOR_GRPC_ENDPOINT": grpc, "COLLECTOR_HTTP_ENDPOINT": http, **env}
        log_path = tmp_path / f"collector{len(started)}-{Path(config).stem}.log"
        proc = start_collector(CONFIG_DIR / config, full_env, binary=collector_bin, log_path=log_path)
        collector = Collector(proc, grpc, http)
        started.append(collector)
        return collector

    yield start
    for collector in started:
        collector.stop()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for collector in started:
            print(f"--- {collector.proc.log_path} (tail) ---\n{collector.log[-3000:]}")  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def wait_for_count(receivers: list[Receiver], table: str, expected: int, timeout: float = 60.0) -> int:
    """Poll until the receivers together have committed ``expected`` rows of ``table`` (or time out)."""
    deadline = time.monotonic() + timeout
    while True:
        total = sum(rows(r, f"SELECT count(*) FROM {table}")[0][0] for r in receivers)
        if total >= expected or time.monotonic() > deadline:
            return total
        time.sleep(0.05)


def otel_agent_sql(query: str, dbs: list[str | Path], *, fmt: str = "json", max_rows: int = 10_000_000) -> str:
    """Run ``otel-agent sql QUERY --db A --db B …`` as a subprocess (the CLI a user runs) and return stdout."""
    cmd = [sys.executable, "-m", "otel_agent", "sql", query, "--format", fmt, "--max-rows", str(max_rows)]
    cmd += ["--timeout-s", "100"]  # a cross-shard join on a loaded machine: more than the default 10 s
    for db in dbs:
        cmd += ["--db", str(db)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"otel-agent sql failed ({done.returncode}): {done.stderr[-3000:]}"
    return done.stdout
