"""Webhook delivery when the other side misbehaves: 500s are retried with backoff until a 2xx, a receiver that is
down or too slow is given up after max_attempts, every attempt is recorded in alert_deliveries, and ingest goes on
meanwhile (the delivery thread is the only one waiting)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.alerts.support import RULES, SECRET, SECRET_ENV, WebhookSink, send_run, webhook_section, write_rules
from tests.conftest import wait_until

ATTEMPTS = """
SELECT e.alert_key, d.attempt, d.delivered, d.status_code, d.error IS NULL AS no_error, d.error
FROM alert_deliveries d JOIN alert_events e USING (event_id)
ORDER BY e.alert_key, d.attempt
"""


def attempts(db: str) -> list[tuple]:
    return [r[:5] for r in run_sql(ATTEMPTS, [db]).rows]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)


def start(make_receiver: Callable[..., Receiver], tmp_path: Path, url: str) -> Receiver:
    hook = webhook_section(url, timeout="500ms", backoff="50ms", max_backoff="200ms", max_attempts=3)
    return make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES + hook), alert_interval_s=3600)


def test_500s_are_retried_with_backoff_until_delivered(make_receiver: Callable[..., Receiver], tmp_path: Path) -> None:
    with WebhookSink(status=500) as sink:
        receiver = start(make_receiver, tmp_path, sink.url)
        db = str(receiver.config.db)
        send_run(receiver, "run_a")
        receiver.alerts.evaluator.evaluate()
        wait_until(lambda: len(attempts(db)) == 3, "three attempts")
        assert attempts(db) == [("run_a", 1, False, 500, False), ("run_a", 2, False, 500, False),
                                ("run_a", 3, False, 500, False)]  # fmt: skip
        assert receiver.alerts.webhook.stats.given_up == 1
        bodies = {d.body for d in sink.deliveries}
        assert len(bodies) == 1  # the same document (and signature) on every attempt
        # The sink recovers: the next alert is delivered at its first attempt.
        sink.status = 200
        send_run(receiver, "run_b")
        receiver.alerts.evaluator.evaluate()
        wait_until(lambda: len(attempts(db)) == 4, "the fourth attempt")
        assert attempts(db)[-1] == ("run_b", 1, True, 200, True)


def test_a_receiver_that_is_down_is_given_up_after_max_attempts(
    make_receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    receiver = start(make_receiver, tmp_path, f"http://127.0.0.1:{closed_port()}/hook")
    db = str(receiver.config.db)
    send_run(receiver, "run_a")
    receiver.alerts.evaluator.evaluate()
    wait_until(lambda: len(attempts(db)) == 3, "three attempts")
    assert attempts(db) == [("run_a", n, False, None, False) for n in (1, 2, 3)]
    errors = [r[5] for r in run_sql(ATTEMPTS, [db]).rows]
    assert all(e.startswith("ConnectionError") for e in errors), errors


def test_a_slow_receiver_times_out_and_ingest_goes_on_meanwhile(
    make_receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    with WebhookSink(delay_s=3.0) as sink:
        receiver = start(make_receiver, tmp_path, sink.url)
        db = str(receiver.config.db)
        send_run(receiver, "run_a")
        receiver.alerts.evaluator.evaluate()
        wait_until(sink.answering.is_set, "the webhook to hold a delivery")
        send_run(receiver, "run_b")  # committed and read back while the delivery thread waits for the answer
        assert sink.answering.is_set()
        wait_until(lambda: len(attempts(db)) >= 1, "the first attempt recorded")
        first = run_sql(ATTEMPTS, [db]).rows[0]
        assert first[:4] == ("run_a", 1, False, None)
        assert first[5].startswith("ReadTimeout")
