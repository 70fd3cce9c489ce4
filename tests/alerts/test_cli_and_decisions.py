"""``otel-agent alerts`` and its decisions (ack, silence, unsilence) over a live receiver and over the closed file:
what is firing, who acknowledged it, and a silence that stops the webhook from being told (the events are still
recorded). A bad rules file stops ``serve`` with one line and exit code 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_agent.server.receiver import Receiver
from tests.alerts.support import RULES, SECRET, SECRET_ENV, WebhookSink, send_run, webhook_section, write_rules
from tests.cli.conftest import invoke, run_process
from tests.conftest import wait_until


def rows(*args: str) -> list[dict]:
    return json.loads(invoke(*args, "--format", "json").stdout)


def test_alerts_ack_and_silence_through_the_receiver_then_the_file(
    make_receiver: Callable[..., Receiver], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    with WebhookSink() as sink:
        rules = write_rules(tmp_path / "rules.toml", RULES + webhook_section(sink.url))
        receiver = make_receiver(alert_rules=rules, alert_interval_s=3600)
        db = str(receiver.config.db)
        evaluator = receiver.alerts.evaluator
        send_run(receiver, "run_1")
        evaluator.evaluate()
        wait_until(lambda: len(sink.deliveries) == 1, "the first delivery")

        [alert] = rows("alerts", "--db", db, "--state", "firing")
        assert (alert["rule"], alert["alert_key"], alert["state"], alert["severity"]) == (
            "runs_seen", "run_1", "firing", "critical",
        )  # fmt: skip
        assert alert["summary"] == "run run_1 is here"
        assert alert["acknowledged_by"] is None

        out = invoke("alerts", "ack", "runs_seen", "run_1", "--by", "ana", "--reason", "on it", "--db", db).stdout
        assert "acknowledged runs_seen run_1" in out
        assert receiver.http_address in out  # through the receiver
        [acked] = rows("alerts", "--db", db, "--state", "acknowledged")
        assert (acked["alert_key"], acked["acknowledged_by"]) == ("run_1", "ana")
        refused = invoke("alerts", "ack", "runs_seen", "run_404", "--by", "ana", "--db", db, code=2)
        assert "no alert 'runs_seen' key 'run_404' has fired" in refused.stderr

        # Silenced: the next alert of the rule is recorded, and the webhook is not told.
        invoke("alerts", "silence", "runs_seen", "*", "--for", "1h", "--by", "ana", "--db", db)
        send_run(receiver, "run_2")
        assert {e.alert_key for e in evaluator.evaluate()} == {"run_2"}
        [silenced] = rows("alerts", "--db", db, "--state", "silenced", "--rule", "runs_seen", "--max-rows", "1")
        assert silenced["silenced_until"] is not None
        invoke("alerts", "unsilence", "runs_seen", "*", "--by", "ana", "--db", db)
        send_run(receiver, "run_3")
        assert {e.alert_key for e in evaluator.evaluate()} == {"run_3"}
        wait_until(lambda: len(sink.deliveries) == 2, "the delivery after the silence")
        assert [d["alert_key"] for d in sink.docs()] == ["run_1", "run_3"]
        assert rows("alerts", "--db", db, "--state", "silenced") == []
        history = rows("alerts", "--db", db, "--history")
        assert [(h["event"], h["alert_key"]) for h in history] == [
            ("firing", "run_3"), ("unsilenced", "*"), ("firing", "run_2"), ("silenced", "*"),
            ("acknowledged", "run_1"), ("firing", "run_1"),
        ]  # fmt: skip
        assert history[4]["actor"] == "ana"
        receiver.stop()

    # The closed file: read and written directly.
    assert {r["alert_key"] for r in rows("alerts", "--db", db, "--state", "firing")} == {"run_1", "run_2", "run_3"}
    out = invoke("alerts", "ack", "runs_seen", "run_2", "--by", "bo", "--db", db).stdout
    assert out.rstrip().endswith(f"({db})")
    acked = rows("alerts", "--db", db, "--state", "acknowledged")
    assert [(r["alert_key"], r["acknowledged_by"]) for r in acked] == [("run_2", "bo"), ("run_1", "ana")]
    deliveries = rows("alerts", "--db", db, "--deliveries")
    assert [(d["alert_key"], d["delivered"], d["status_code"]) for d in deliveries] == [
        ("run_3", True, 200), ("run_1", True, 200),
    ]  # fmt: skip


BAD_RULES = {
    "unknown kind": ('[[rule]]\nname = "x"\nkind = "vibes"\n', "rule x: kind: one of receipt, run_abandoned"),
    "receipt state": (
        '[[rule]]\nname = "x"\nkind = "receipt"\nstate = "working"\n',
        "rule x: state: one of stuck, orphaned, outcome_failed, uncertain, not 'working'",
    ),
    "duration": (
        '[[rule]]\nname = "x"\nkind = "guard_blocks"\nwindow = "soon"\n',
        "rule x: window: expected a duration such as 90s, 15m or 2h, not 'soon'",
    ),
    "threshold": (
        '[[rule]]\nname = "x"\nkind = "error_rate"\nthreshold = 3\n',
        "rule x: threshold: 3 is outside 0.0…1.0",
    ),
    "unknown field": ('[[rule]]\nname = "x"\nkind = "cost"\nbudget_usd = 1\nbudjet = 2\n', "unknown field 'budjet'"),
    "a write": (
        '[[rule]]\nname = "x"\nkind = "sql"\nquery = "DELETE FROM spans"\n',
        "rule x: query: only read statements (SELECT, EXPLAIN SELECT) are allowed, not DELETE",
    ),
    "no key": (
        '[[rule]]\nname = "x"\nkind = "sql"\nquery = "SELECT run_id FROM runs"\n',
        "rule x: query: no column named key (columns: run_id)",
    ),
    "unknown view": (
        '[[rule]]\nname = "x"\nkind = "sql"\nquery = "SELECT 1 AS key FROM nowhere"\n',
        "rule x: query: Catalog Error: Table with name nowhere does not exist",
    ),
    "twice": ('[[rule]]\nname = "x"\nkind = "budget_exceeded"\n' * 2, "rule x: a second rule has this name"),
    "no secret": ('[webhook]\nurl = "http://127.0.0.1:1/"\nsecret_env = "OTEL_AGENT_NOT_SET_ANYWHERE"\n',
                  "webhook.secret_env: the environment variable OTEL_AGENT_NOT_SET_ANYWHERE is not set"),
    "toml": ("[[rule]\n", "not valid TOML"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_RULES))
def test_a_bad_rule_refuses_the_start_in_one_line(
    case: str, make_receiver: Callable[..., Receiver], tmp_path: Path
) -> None:
    from otel_agent.errors import ConfigError

    text, expected = BAD_RULES[case]
    path = tmp_path / "rules.toml"
    path.write_text(text)
    db = tmp_path / "never.duckdb"
    with pytest.raises(ConfigError) as refused:
        make_receiver(db=db, alert_rules=str(path), first_open=True)
    message = str(refused.value)
    assert message.startswith(str(path) + ": ")
    assert expected in message
    assert "\n" not in message
    assert not db.exists()  # nothing was left behind


def test_serve_with_a_bad_rule_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rule:\n  - name: slow\n    kind: receipt\n    state: stuck\n    window: 10 minutes\n")
    ran = run_process("serve", "--db", str(tmp_path / "s.duckdb"), "--grpc-endpoint", "127.0.0.1:0",
                      "--http-endpoint", "127.0.0.1:0", "--alert-rules", str(path))  # fmt: skip
    assert ran.code == 2
    assert ran.stderr.strip().splitlines() == [
        f"Error: {path}: rule slow: window: expected a duration such as 90s, 15m or 2h, not '10 minutes'"
    ]
