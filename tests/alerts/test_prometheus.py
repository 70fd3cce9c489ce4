"""Issue 36 §3: a real Prometheus (Debian's ``prometheus`` package, started here on loopback) scrapes the
receiver's ``/metrics``, and PromQL over its HTTP API returns the firing alert and the receipt states."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

import otel_agent.instrument as oi
from otel_agent.demo.telemetry import make_provider, otlp_exporter
from otel_agent.server.receiver import Receiver
from tests.alerts.support import write_rules
from tests.conftest import free_port, wait_until
from tests.tools import missing_tool

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """Start Prometheus scraping the given receiver address every second; yields ``start(target) -> API URL``."""
    if not Path(PROMETHEUS).exists():
        missing_tool("prometheus", "no prometheus binary: apt-get install prometheus (scripts/test.sh does it)")
    procs: list[subprocess.Popen[bytes]] = []

    def start(target: str) -> str:
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: otel_agent\n    metrics_path: /metrics\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        port = free_port()
        log = (tmp_path / "prometheus.log").open("wb")
        procs.append(
            subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def promql(api: str, query: str) -> list[dict[str, Any]]:
    """An instant query's vector (empty while Prometheus is starting or has not scraped yet)."""
    try:
        reply = requests.get(f"{api}/api/v1/query", params={"query": query}, timeout=5)
    except requests.ConnectionError:
        return []
    if reply.status_code != 200:
        return []
    doc = reply.json()
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def by_label(result: list[dict[str, Any]], label: str) -> dict[str, float]:
    return {r["metric"][label]: float(r["value"][1]) for r in result}


def test_prometheus_scrapes_the_firing_alert_and_the_receipt_states(
    make_receiver: Callable[..., Receiver], prometheus: Callable[[str], str], tmp_path: Path
) -> None:
    rules = write_rules(
        tmp_path / "rules.toml",
        """
[[rule]]
name = "handoff_orphaned"
kind = "receipt"
state = "orphaned"
window = "1s"
severity = "critical"
""",
    )
    receiver = make_receiver(alert_rules=rules, alert_interval_s=0.5)
    provider = make_provider("prometheus-test", otlp_exporter(receiver.grpc_address))
    try:
        with oi.use_tracer_provider(provider), oi.flow_run("prometheus_test", run_id="run_prometheus_test"):
            oi.delegate("report", operation_id="op_never_accepted", target="nobody")  # orphaned after 1 s
            done = oi.delegate("report", operation_id="op_done", target="worker")
            with oi.accept(done.carrier, expected_artifact="report") as work:
                work.completed(artifact_ref="artv_report_1")
            done.verified("artifact_checked")
        assert provider.force_flush()
    finally:
        provider.shutdown()
    api = prometheus(receiver.http_address.removeprefix("http://"))

    firing = wait_until(
        lambda: by_label(promql(api, 'otel_agent_alerts_firing{rule="handoff_orphaned"} == 1'), "rule"),
        "Prometheus to see the firing alert",
    )
    assert firing == {"handoff_orphaned": 1.0}
    [series] = promql(api, "otel_agent_alerts_firing")
    assert series["metric"]["severity"] == "critical"
    assert series["metric"]["job"] == "otel_agent"
    # The receipt states, with the default windows (the 1 s window is the rule's own): one operation waits for
    # its acknowledgement, one is verified, and every other state is there with 0.
    states = wait_until(
        lambda: (s := by_label(promql(api, "otel_agent_receipts"), "state")).get("verified") == 1 and s,
        "the receipt states",
    )
    assert states == {"uncertain": 0, "orphaned": 0, "stuck": 0, "outcome_failed": 0, "waiting": 1, "working": 0,
                      "verified": 1}  # fmt: skip
    runs = by_label(promql(api, "otel_agent_runs"), "status")
    assert runs["ok"] >= 1
    # The /healthz figures too: every span the receiver committed is counted.
    committed = promql(api, "otel_agent_writer_items_committed_total")
    assert float(committed[0]["value"][1]) > 0
    assert by_label(promql(api, "up"), "job") == {"otel_agent": 1.0}
