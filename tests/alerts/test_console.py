"""The console's alerts page on a live receiver: the firing alert with its evidence, the page's JSON twin, and
acknowledge from the page (CSRF token, the INSERT through the writer), shown on the page afterwards."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import requests

from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.alerts.support import write_rules
from tests.alerts.test_cli_and_decisions import RULES, send_run


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
    from tests.mcp.conftest import data_of, http_client, run

    receiver = make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600)
    send_run(receiver, "run_mcp")
    receiver.alerts.evaluator.evaluate()

    async def session() -> dict:
        async with http_client(receiver, None) as client:
            return data_of(await client.call_tool("get_alerts", {}))

    [alert] = run(session)["data"]
    assert (alert["rule"], alert["alert_key"], alert["state"]) == ("runs_seen", "run_mcp", "firing")
