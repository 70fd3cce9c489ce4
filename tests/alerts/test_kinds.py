"""Issue 36 §2: every rule kind fires on the data it is about and resolves when that is over, evaluated by a live
receiver's evaluator as of chosen times (the rules' windows are relative to the evaluation's time, so the test
moves time instead of waiting for it). Data comes from the instrumentation through OTLP/gRPC."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from pathlib import Path

import otel_agent.instrument as oi
from otel_agent.demo.telemetry import make_provider, otlp_exporter
from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.alerts.support import write_rules
from tests.conftest import wait_until

RULES = """
[[rule]]
name = "runs_failing"
kind = "error_rate"
window = "1h"
threshold = 0.2
min_count = 2

[[rule]]
name = "runs_failing_by_workflow"
kind = "error_rate"
window = "1h"
threshold = 0.4
min_count = 1
group_by = "workflow_name"

[[rule]]
name = "provider_failing"
kind = "error_rate"
of = "providers"
window = "1h"
threshold = 0.4
min_count = 2

[[rule]]
name = "spend_per_hour"
kind = "cost"
per = "hour"
budget_usd = 0.03

[[rule]]
name = "expensive_run"
kind = "cost"
per = "run"
budget_usd = 0.03
lookback = "1h"

[[rule]]
name = "over_budget"
kind = "budget_exceeded"
lookback = "1h"

[[rule]]
name = "guards_blocking"
kind = "guard_blocks"
window = "1h"
above = 0
severity = "info"

[[rule]]
name = "handoff_orphaned"
kind = "receipt"
state = "orphaned"
window = "60s"

[[rule]]
name = "handoff_stuck"
kind = "receipt"
state = "stuck"
window = "60s"

[[rule]]
name = "handoff_failed"
kind = "receipt"
state = "outcome_failed"

[[rule]]
name = "handoff_uncertain"
kind = "receipt"
state = "uncertain"
for = "30s"

[[rule]]
name = "run_abandoned"
kind = "run_abandoned"

# a run in progress (its run span announced, not ended)
[[rule]]
name = "run_unfinished"
kind = "sql"
query = '''
SELECT run_id AS key, 'run ' || run_id || ' has not ended' AS summary, status, span_count
FROM runs WHERE status = 'running' AND workflow_name = 'long'
'''
"""


def accept_and_fall_silent(provider: object, carrier: dict[str, str]) -> None:
    """Accept the handoff, then never a word (the acceptance's span stays open)."""
    with oi.use_tracer_provider(provider):  # type: ignore[arg-type]
        oi.accept(carrier, expected_artifact="report").__enter__()
        assert oi.flush()


def fired(events: list) -> set[tuple[str, str, str]]:
    return {(e.event, e.rule, e.alert_key) for e in events}


def test_every_kind_fires_on_its_data_and_resolves(make_receiver: Callable[..., Receiver], tmp_path: Path) -> None:
    receiver = make_receiver(alert_rules=write_rules(tmp_path / "rules.toml", RULES), alert_interval_s=3600)
    db = receiver.config.db
    evaluator = receiver.alerts.evaluator
    assert evaluator is not None
    provider = make_provider("alerts-kinds", otlp_exporter(receiver.grpc_address))
    now = dt.datetime.now(dt.UTC)
    with oi.use_tracer_provider(provider):
        with oi.flow_run("costly", run_id="run_costly", max_model_calls=1, max_cost_usd=0.05) as run:
            for outcome in ("ok", "error"):
                with oi.provider_call("acme", "m1") as call:
                    call.set_cost(0.02)
                    if outcome == "error":
                        call.fail("rate_limit")
            oi.guard_result("pii", passed=False, reason="pii_found")
            run.fail("gave_up")
        with oi.flow_run("cheap", run_id="run_cheap"), oi.provider_call("acme", "m2") as call:
            call.set_cost(0.001)
        orphan = oi.delegate("report", operation_id="op_orphan")
        stuck = oi.delegate("report", operation_id="op_stuck")
        accepted_only = threading.Thread(target=accept_and_fall_silent, args=(provider, stuck.carrier))
        accepted_only.start()  # in a thread of its own: its open span is not the parent of what follows here
        accepted_only.join()
        failed = oi.delegate("report", operation_id="op_failed")
        with oi.accept(failed.carrier, expected_artifact="report") as work:
            work.completed(artifact_ref="artv_1")
        failed.failed("artifact_missing")
        oi.Receipt("op_uncertain", "hof_no_delegation").completed(artifact_ref="artv_2")  # never delegated
        unfinished = oi.flow_run("long", run_id="run_unfinished")
        unfinished.__enter__()
        with oi.step("first_step"):
            pass
        assert oi.flush()

    def settled() -> bool:
        named = (
            "SELECT run_id, status FROM runs WHERE run_id IN ('run_cheap', 'run_costly', 'run_unfinished') ORDER BY 1"
        )
        runs = run_sql(named, [db]).rows
        ops = run_sql("SELECT count(*) FROM receipt_state", [db]).rows
        return runs == [("run_cheap", "ok"), ("run_costly", "error"), ("run_unfinished", "running")] and ops == [(4,)]

    wait_until(settled, "the runs and receipts in the views")
    t1 = now + dt.timedelta(minutes=2)
    first = fired(evaluator.evaluate(at=t1))
    assert first == {
        ("firing", "runs_failing", "all"),
        ("firing", "runs_failing_by_workflow", "costly"),
        ("firing", "provider_failing", "acme/m1"),
        ("firing", "spend_per_hour", "all"),
        ("firing", "expensive_run", "run_costly"),
        ("firing", "over_budget", "run_costly"),
        ("firing", "guards_blocking", "all"),
        ("firing", "handoff_orphaned", "op_orphan"),
        ("firing", "handoff_stuck", "op_stuck"),
        ("firing", "handoff_failed", "op_failed"),
        ("firing", "run_unfinished", "run_unfinished"),
    }
    assert evaluator.stats.rules["run_abandoned"].failures == 0  # evaluated (tests/alerts/test_two_process.py fires it)
    assert all(s.failures == 0 for s in evaluator.stats.rules.values())
    # 'for': the uncertain operation has been seen once; 30 s of evaluations later it fires. Nothing fires twice.
    assert fired(evaluator.evaluate(at=t1 + dt.timedelta(seconds=31))) == {
        ("firing", "handoff_uncertain", "op_uncertain")
    }
    assert fired(evaluator.evaluate(at=t1 + dt.timedelta(seconds=32))) == set()

    stored = run_sql(
        "SELECT rule, alert_key, evidence->>'run_id', evidence->>'budget_exceeded_limits', severity FROM alert_events "
        "WHERE rule IN ('over_budget', 'guards_blocking')  ORDER BY rule",
        [db],
    ).rows
    assert stored == [
        ("guards_blocking", "all", None, None, "info"),
        ("over_budget", "run_costly", "run_costly", '["model_calls"]', "warning"),
    ]

    # What was wrong is over: the handoffs verified by new attempts, the long run ended, and two hours later the
    # runs are out of every window.
    with oi.use_tracer_provider(provider):
        for op in (orphan, stuck, failed, oi.delegate("report", operation_id="op_uncertain")):
            again = op.retry() if op.operation_id != "op_uncertain" else op
            with oi.accept(again.carrier, expected_artifact="report") as work:
                work.completed(artifact_ref="artv_3")
            again.verified("checked")
        unfinished.__exit__(None, None, None)
        assert oi.flush()
    provider.shutdown()

    def over() -> bool:
        states = run_sql("SELECT operation_id, state FROM receipt_state ORDER BY 1", [db]).rows
        ended = run_sql("SELECT status FROM runs WHERE run_id = 'run_unfinished'", [db]).rows
        return len(states) == 4 and all(s == "verified" for _, s in states) and ended == [("ok",)]

    wait_until(over, "the handoffs verified and the run ended", timeout_s=20)
    later = fired(evaluator.evaluate(at=now + dt.timedelta(hours=2)))
    assert later == {("resolved", rule, key) for _, rule, key in first} | {
        ("resolved", "handoff_uncertain", "op_uncertain")
    }
    assert evaluator.firing_by_rule() == dict.fromkeys(evaluator.rules.by_name, 0)
