"""The console's alerts page on a live receiver: the firing alert with its evidence, the page's JSON twin, and
acknowledge from the page (CSRF token, the INSERT through the writer), shown on the page afterwards."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import requests
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

import otel_agent.instrument as oi
from otel_agent.demo.telemetry import make_provider
from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.alerts.support import RULES, send_run, write_rules
from tests.conftest import wait_until, write_tokens_file
from tests.mcp.conftest import data_of, http_client, run


def test_the_alerts_page_lists_and_acknowledges(make_receiver: Callable[..., Receiver], tmp_path: Path) -> None:
    receiver = make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600)
    send_run(receiver, "run_<b>1</b>")  # telemetry is hostile: escaped on the page
    receiver.alerts.evaluator.evaluate()
    s = requests.Session()
    page = s.get(receiver.http_address + "/alerts", timeout=30)
    assert page.status_code == 200
    assert "run_&lt;b&gt;1&lt;/b&gt;" in page.text
    assert "<b>1</b>" not in page.text
    assert 'href="/alerts"' in page.text  # in the navigation
    doc = s.get(receiver.http_address + "/alerts.json", timeout=30).json()["data"]
    [firing] = doc["firing"]
    assert (firing["rule"], firing["alert_key"], firing["severity"]) == ("runs_seen", "run_<b>1</b>", "critical")
    assert firing["acknowledged_by"] is None

    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
    form = {"csrf": csrf, "rule": "runs_seen", "key": "run_<b>1</b>", "reason": "looking"}
    refused = s.post(receiver.http_address + "/alerts/ack", data={**form, "csrf": "0" * 64}, allow_redirects=False,
                     timeout=30)  # fmt: skip
    assert refused.status_code == 403
    done = s.post(receiver.http_address + "/alerts/ack", data=form, allow_redirects=False, timeout=30)
    assert done.status_code == 303
    assert done.headers["location"].startswith("/alerts?acked=alev_")
    [acked] = s.get(receiver.http_address + "/alerts.json", timeout=30).json()["data"]["firing"]
    assert acked["acknowledged_by"] is not None
    rows = run_sql("SELECT event, summary FROM alert_events ORDER BY event_at", [str(receiver.config.db)]).rows
    assert rows == [("firing", "run run_<b>1</b> is here"), ("acknowledged", "looking")]


def test_the_mcp_tool_lists_the_firing_alerts(make_receiver: Callable[..., Receiver], tmp_path: Path) -> None:
    receiver = make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600)
    send_run(receiver, "run_mcp")
    receiver.alerts.evaluator.evaluate()

    async def session() -> dict:
        async with http_client(receiver, None) as client:
            return data_of(await client.call_tool("get_alerts", {}))

    [alert] = run(session)["data"]
    assert (alert["rule"], alert["alert_key"], alert["state"]) == ("runs_seen", "run_mcp", "firing")


def test_metrics_and_decisions_need_a_token_when_the_receiver_has_tokens(
    make_receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    tokens = write_tokens_file(
        tmp_path / "tokens.json",
        {"token": "t-ingest", "principal": "agent", "roles": ["ingest"]},
        {"token": "t-query", "principal": "analyst", "roles": ["query"]},
        {"token": "t-review", "principal": "oncall", "roles": ["query", "review"]},
    )
    receiver = make_receiver(
        alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600, tokens_file=tokens
    )
    url = receiver.http_address

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    assert requests.get(url + "/metrics", timeout=30).status_code == 401
    scraped = requests.get(url + "/metrics", headers=bearer("t-ingest"), timeout=30)  # any valid token
    assert scraped.status_code == 200
    assert 'otel_agent_alerts_firing{rule="runs_seen",severity="critical"} 0.0' in scraped.text

    # an alert to decide about: a run sent with the ingest token, then one evaluation
    exporter = OTLPSpanExporter(
        endpoint=receiver.grpc_address, insecure=True, headers={"authorization": "Bearer t-ingest"}
    )
    provider = make_provider("alerts-auth", exporter)
    with oi.use_tracer_provider(provider), oi.flow_run("w", run_id="run_auth"):
        pass
    provider.shutdown()
    wait_until(lambda: receiver.alerts.evaluator.evaluate(), "the alert of run_auth")
    body = {"decision": "acknowledged", "rule": "runs_seen", "key": "run_auth", "actor": "ana"}
    refused = requests.post(url + "/v1/alerts/decision", json=body, headers=bearer("t-query"), timeout=30)
    assert refused.status_code == 403
    assert "review" in refused.json()["error"]
    done = requests.post(url + "/v1/alerts/decision", json=body, headers=bearer("t-review"), timeout=30)
    assert done.status_code == 200
    assert (done.json()["actor"], done.json()["principal"]) == ("ana", "oncall")
    unknown = requests.post(url + "/v1/alerts/decision", json={**body, "key": "nope"}, headers=bearer("t-review"),
                            timeout=30)  # fmt: skip
    assert unknown.status_code == 404
    garbage = requests.post(url + "/v1/alerts/decision", data=b"\xff{", headers=bearer("t-review"), timeout=30)
    assert garbage.status_code == 400
