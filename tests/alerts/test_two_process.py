"""Issue 36 §3: a worker accepts a handoff in another OS process and is killed with SIGKILL. Its receipt turns
stuck, the alert fires on the receiver's next evaluation after the window, and a webhook receiver on loopback gets
one signed delivery; when the operation is delegated again (it is no longer stuck: the new attempt waits for its
acknowledgement) and then verified, it gets one "resolved", and nothing more.

Real parts throughout: the receiver (OTLP/gRPC from two processes' SDK exporters), the evaluator thread on its
interval, the webhook sender's HTTP POSTs to a server on loopback, the store read back through the query API.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

import otel_agent.instrument as oi
from otel_agent.alerts.webhook import SIGNATURE_HEADER, verify
from otel_agent.demo.telemetry import make_provider, otlp_exporter
from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.alerts.support import SECRET, SECRET_ENV, WebhookSink, Worker, webhook_section, write_rules
from tests.conftest import wait_until

WINDOW_S = 2.0
INTERVAL_S = 0.5
SILENCE_S = 4.0


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_killed_worker_fires_one_signed_alert_and_a_verified_retry_resolves_it(
    make_receiver: Callable[..., Receiver], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    with WebhookSink() as sink:
        rules = write_rules(
            tmp_path / "rules.toml",
            f"""
[[rule]]
name = "handoff_stuck"
kind = "receipt"
state = "stuck"
window = "{WINDOW_S}s"
severity = "critical"
"""
            + webhook_section(sink.url),
        )
        receiver = make_receiver(alert_rules=rules, alert_interval_s=INTERVAL_S)
        db = receiver.config.db
        provider = make_provider("alerts-test-delegator", otlp_exporter(receiver.grpc_address))
        try:
            with oi.use_tracer_provider(provider), oi.flow_run("alerts_test", run_id="run_alerts_test"):
                first = oi.delegate("summary_report", operation_id="op_alert_stuck", target="summarizer")
                assert oi.flush()

            worker = Worker(
                {"carrier": first.carrier, "endpoint": receiver.grpc_address, "expected_artifact": "summary_report",
                 "mode": "hang"}
            )  # fmt: skip
            try:
                accepted = worker.expect("accepted")
                assert accepted["handoff_id"] == first.handoff_id
                assert accepted["pid"] != os.getpid()
                os.kill(worker.proc.pid, signal.SIGKILL)
                assert worker.proc.wait(timeout=30) == -signal.SIGKILL
            finally:
                worker.kill()

            # The alert: one signed POST, for this operation, whose evidence is the receipt's row.
            [fired] = wait_until(lambda: sink.docs() or None, "the firing delivery")
            delivery = sink.deliveries[0]
            assert verify(SECRET.encode(), delivery.body, delivery.headers[SIGNATURE_HEADER])
            assert not verify(b"another secret", delivery.body, delivery.headers[SIGNATURE_HEADER])
            assert (fired["event"], fired["rule"], fired["alert_key"]) == ("firing", "handoff_stuck", "op_alert_stuck")
            assert fired["severity"] == "critical"
            assert fired["rule_kind"] == "receipt"
            evidence = fired["evidence"]
            assert evidence["state"] == "stuck"
            assert evidence["handoff_id"] == first.handoff_id
            assert evidence["acceptors"] == ["alerts-test-worker"]
            # Not before its window: the last transition (the acceptance) is at least the window old when it fires,
            # and (a hang guard, generous for a loaded machine) not long after the evaluation that could see it.
            accepted_at = _ts(evidence["last_transition_at"]).replace(tzinfo=dt.UTC)
            age_s = (_ts(fired["event_at"]) - accepted_at).total_seconds()
            assert WINDOW_S <= age_s < WINDOW_S + INTERVAL_S + 20

            # Delegated again, done by a worker that completes, and verified by the delegator.
            with oi.use_tracer_provider(provider), oi.flow_run("alerts_test_retry", run_id="run_alerts_retry"):
                second = first.retry(reason="worker_lost")
                assert oi.flush()
            retry = Worker(
                {"carrier": second.carrier, "endpoint": receiver.grpc_address, "expected_artifact": "summary_report",
                 "mode": "complete", "artifact_ref": "artv_summary_2"}
            )  # fmt: skip
            try:
                retry.expect("accepted")
                retry.expect("completed")
                assert retry.proc.wait(timeout=30) == 0
            finally:
                retry.kill()
            with oi.use_tracer_provider(provider):
                second.verified("artifact_checked")
                assert oi.flush()

            docs = wait_until(lambda: len(found := sink.docs()) >= 2 and found, "the resolved delivery")
        finally:
            provider.shutdown()
        assert [(d["event"], d["alert_key"]) for d in docs] == [
            ("firing", "op_alert_stuck"),
            ("resolved", "op_alert_stuck"),
        ]
        resolved = sink.deliveries[1]
        assert verify(SECRET.encode(), resolved.body, resolved.headers[SIGNATURE_HEADER])
        assert docs[1]["evidence"]["handoff_id"] == first.handoff_id  # the last row seen firing

        # Recorded: the two events (append-only), and one delivered attempt each.
        wait_until(lambda: run_sql("SELECT count(*) FROM alert_deliveries", [db]).rows == [(2,)], "attempts stored")
        events = run_sql(
            "SELECT event, rule, alert_key, evidence->>'state' FROM alert_events ORDER BY event_at", [db]
        ).rows
        assert events == [
            ("firing", "handoff_stuck", "op_alert_stuck", "stuck"),
            ("resolved", "handoff_stuck", "op_alert_stuck", "stuck"),
        ]
        attempts = run_sql(
            "SELECT e.event, d.attempt, d.delivered, d.status_code, d.url FROM alert_deliveries d "
            "JOIN alert_events e USING (event_id) ORDER BY d.attempted_at",
            [db],
        ).rows
        assert attempts == [("firing", 1, True, 200, sink.url), ("resolved", 1, True, 200, sink.url)]
        verified = "SELECT state FROM receipt_state WHERE operation_id = 'op_alert_stuck'"
        wait_until(lambda: run_sql(verified, [db]).rows == [("verified",)], "the operation verified")
        assert len(sink.deliveries) == 2  # evaluations went on meanwhile: nothing fired twice


def test_a_run_killed_midway_shows_running_then_abandoned_and_its_alert_fires(
    make_receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    """The worker's run never ends (SIGKILL): its run span was announced (a pending span) and never arrives. The
    runs view shows it running, then abandoned once silent for --run-silence-s, and the run_abandoned rule fires."""
    rules = write_rules(
        tmp_path / "rules.toml",
        """
[[rule]]
name = "run_abandoned"
kind = "run_abandoned"
severity = "critical"
""",
    )
    receiver = make_receiver(alert_rules=rules, alert_interval_s=3600, run_silence_s=SILENCE_S)
    db = receiver.config.db
    provider = make_provider("alerts-test-delegator", otlp_exporter(receiver.grpc_address))
    try:
        with oi.use_tracer_provider(provider), oi.flow_run("alerts_test", run_id="run_delegator"):
            handoff = oi.delegate("summary_report", operation_id="op_killed_run")
        assert provider.force_flush()
    finally:
        provider.shutdown()
    worker = Worker(
        {"carrier": handoff.carrier, "endpoint": receiver.grpc_address, "expected_artifact": "summary_report",
         "mode": "hang", "run_id": "run_worker_killed"}
    )  # fmt: skip
    try:
        worker.expect("accepted")
        os.kill(worker.proc.pid, signal.SIGKILL)
        assert worker.proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        worker.kill()
    status = "SELECT status, current_step FROM runs WHERE run_id = 'run_worker_killed'"
    seen = wait_until(lambda: run_sql(status, [db]).rows, "the killed worker's run in the runs view")
    assert seen[0][0] in ("running", "abandoned")  # running until it has been silent for SILENCE_S
    wait_until(lambda: run_sql(status, [db]).rows[0][0] == "abandoned", "the run abandoned")
    events = receiver.alerts.evaluator.evaluate()
    assert [(e.event, e.rule, e.alert_key, e.severity) for e in events] == [
        ("firing", "run_abandoned", "run_worker_killed", "critical")
    ]
    assert events[0].summary.startswith("run run_worker_killed (alerts_worker) was abandoned: no activity since ")
    assert run_sql("SELECT status FROM runs WHERE run_id = 'run_delegator'", [db]).rows == [("ok",)]
