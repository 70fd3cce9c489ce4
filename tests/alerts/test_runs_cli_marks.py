"""``otel-agent runs`` as a table ends with a line for each listed run that is the key of a firing alert (issue 36;
docs/alerts.md "On the console and in otel-agent runs"); csv and json stay the rows only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from otel_agent.server.receiver import Receiver
from tests.alerts.support import send_run, write_rules
from tests.cli.conftest import invoke

RULES = """
[[rule]]
name = "run_watch"
kind = "sql"
query = "SELECT run_id AS key FROM runs WHERE run_id LIKE 'run_watched%'"
"""


def test_runs_names_the_firing_alerts_of_listed_runs(make_receiver: Callable[..., Receiver], tmp_path: Path) -> None:
    receiver = make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600)
    for run_id in ("run_quiet", "run_watched_\x1b[31m<b>"):  # a run id is telemetry: shown escaped
        send_run(receiver, run_id)
    assert {e.alert_key for e in receiver.alerts.evaluator.evaluate()} == {"run_watched_\x1b[31m<b>"}
    db = str(receiver.config.db)

    out = invoke("runs", "--db", db).stdout.splitlines()
    assert [line for line in out if line.startswith("alert firing")] == [
        "alert firing for run_watched_\\x1b[31m<b>: run_watch"
    ]
    assert "\x1b[31m<b>" not in "\n".join(out)
    assert [r["run_id"] for r in json.loads(invoke("runs", "--db", db, "--format", "json").stdout)] == [
        "run_watched_\x1b[31m<b>", "run_quiet",
    ]  # fmt: skip
