"""Issue 15 item 11: a completion with no verification is outcome_failed once the verification window (default
120 s, the acknowledgement window) has passed — in the views and in `otel-agent receipts`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_of


def record() -> None:
    with oi.flow_run("research", run_id="run_r"):
        handoff = oi.delegate("fact_check_report", target="fact_checker", operation_id="op_fc")
    with oi.accept(handoff.carrier, expected_artifact="fact_check_report") as work:
        work.completed("artv_checked")  # and no verification ever comes


def state_at(db: Path, at: dt.datetime) -> tuple[str, str]:
    row = rows(db, "SELECT state, why FROM receipt_state_at(?) WHERE operation_id = 'op_fc'", [at])[0]
    return row["state"], row["why"]


def test_an_unverified_completion_fails_after_120_seconds(tmp_path: Path) -> None:
    db = store_of(tmp_path / "s.duckdb", record)
    [done] = rows(db, "SELECT time FROM receipt_transitions WHERE transition = 'completed'")
    completed = done["time"]
    waiting, why = state_at(db, completed + dt.timedelta(seconds=119))
    assert waiting == "waiting"
    assert "verification window open until" in why
    failed, why = state_at(db, completed + dt.timedelta(seconds=121))
    assert failed == "outcome_failed"
    assert "no verification within 00:02:00" in why
    # the CLI says the same with its default window, and a longer window keeps it waiting
    at = (completed + dt.timedelta(seconds=122)).isoformat(timespec="seconds")  # --at takes whole seconds
    out = json.loads(run_cli(db, "receipts", "--at", at, "--format", "json"))
    assert [(r["operation_id"], r["state"]) for r in out] == [("op_fc", "outcome_failed")]
    longer = json.loads(run_cli(db, "receipts", "--at", at, "--verification-window", "900", "--format", "json"))
    assert [r["state"] for r in longer] == ["waiting"]
