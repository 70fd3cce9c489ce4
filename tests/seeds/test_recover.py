"""Issue 15 item 12 (seed 002): a recovery records its authority, max attempts, cost or time limit and the
evidence that will mark it successful (oi.recover); receipt_recoveries and `otel-agent receipts --recoveries`
show the recoveries per operation and whether a limit was exceeded."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A
from tests.seeds.support import provider_store_fixture, rows, run_cli

RUN = "run_rec"


def record(provider: TracerProvider) -> None:
    with oi.flow_run("research", run_id=RUN), oi.step("fact_check"):
        # an orphaned delegation, re-delegated by policy; the receipt's verification is the success evidence
        first = oi.delegate("fact_check_report", operation_id="op_orph", handoff_id="hof_a1", target="checker")
        rec = oi.recover(first, authority="policy:auto_redelegate", max_attempts=2, time_limit_s=600,
                         success_evidence="outcome_verified", trigger="orphaned", action="redelegate",
                         recovery_id="rec_orph")  # fmt: skip
        retry = first.retry(handoff_id="hof_a2")
        assert rec.attempt(handoff_id=retry.handoff_id, cost_usd=0.002) == 1
        # a manual recovery that overstepped both its attempts and its cost
        over = oi.recover("op_cost", authority="human:alice", mode="manual", max_attempts=1, max_cost_usd=0.01,
                          success_evidence="artifact:fact_check_report", recovery_id="rec_cost")  # fmt: skip
        over.attempt(cost_usd=0.008)
        over.attempt(cost_usd=0.006, reason="second_try")
    with oi.accept(retry.carrier, expected_artifact="fact_check_report") as work:
        work.completed("artv_checked")
    work.verified()
    slow = oi.recover("op_slow", authority="policy:rerun", max_attempts=3, time_limit_s=60,
                      success_evidence="outcome_verified", recovery_id="rec_slow")  # fmt: skip
    slow.attempt()
    done = oi.recover("op_done", authority="policy:rerun", max_attempts=1, max_cost_usd=1.0,
                      success_evidence="verifier:coverage", recovery_id="rec_done")  # fmt: skip
    done.attempt(cost_usd=0.5)
    done.succeeded("ver_coverage_ok")
    oi.recover("op_gone", authority="policy:rerun", max_attempts=1, time_limit_s=60,
               success_evidence="outcome_verified", recovery_id="rec_gone").failed("source_gone")  # fmt: skip
    # an attempt whose plan was never recorded (another writer, no helper): authority and limits unknown
    tracer = provider.get_tracer("elsewhere")
    tracer.start_span("otel_agent.recovery.attempt", attributes={
        A.RECORD_KIND: "recovery", A.RECOVERY_ID: "rec_unplanned", A.RECOVERY_TRANSITION: "attempt",
        A.RECEIPT_OPERATION_ID: "op_unplanned", A.RECOVERY_ATTEMPT: 1}).end()  # fmt: skip


store = provider_store_fixture(record, stored=lambda spans: [*spans, spans[3]])  # one span stored twice


COLUMNS = ("recovery_id", "operation_id", "status", "limit_exceeded", "exceeded_limits", "mode", "authority",
           "max_attempts", "attempts", "max_cost_usd", "cost_usd", "time_limit_s", "success_evidence",
           "evidence_ref", "from_handoff_id", "last_handoff_id")  # fmt: skip


def test_each_recovery_with_its_authority_limits_and_status(store: Path) -> None:
    got = rows(store, f"SELECT {', '.join(COLUMNS)}, operation_verified_at IS NOT NULL AS verified, run_id"
                      " FROM receipt_recoveries ORDER BY recovery_id")  # fmt: skip
    assert got == [
        {"recovery_id": "rec_cost", "operation_id": "op_cost", "status": "limit_exceeded", "limit_exceeded": True,
         "exceeded_limits": ["attempts", "cost_usd"], "mode": "manual", "authority": "human:alice",
         "max_attempts": 1, "attempts": 2, "max_cost_usd": 0.01, "cost_usd": pytest.approx(0.014),
         "time_limit_s": None, "success_evidence": "artifact:fact_check_report", "evidence_ref": None,
         "from_handoff_id": None, "last_handoff_id": None, "verified": False, "run_id": RUN},
        {"recovery_id": "rec_done", "operation_id": "op_done", "status": "succeeded", "limit_exceeded": False,
         "exceeded_limits": [], "mode": "automatic", "authority": "policy:rerun", "max_attempts": 1, "attempts": 1,
         "max_cost_usd": 1.0, "cost_usd": 0.5, "time_limit_s": None, "success_evidence": "verifier:coverage",
         "evidence_ref": "ver_coverage_ok", "from_handoff_id": None, "last_handoff_id": None, "verified": False,
         "run_id": None},
        {"recovery_id": "rec_gone", "operation_id": "op_gone", "status": "failed", "limit_exceeded": False,
         "exceeded_limits": [], "mode": "automatic", "authority": "policy:rerun", "max_attempts": 1, "attempts": 0,
         "max_cost_usd": None, "cost_usd": None, "time_limit_s": 60.0, "success_evidence": "outcome_verified",
         "evidence_ref": None, "from_handoff_id": None, "last_handoff_id": None, "verified": False, "run_id": None},
        {"recovery_id": "rec_orph", "operation_id": "op_orph", "status": "succeeded", "limit_exceeded": False,
         "exceeded_limits": [], "mode": "automatic", "authority": "policy:auto_redelegate", "max_attempts": 2,
         "attempts": 1, "max_cost_usd": None, "cost_usd": 0.002, "time_limit_s": 600.0,
         "success_evidence": "outcome_verified", "evidence_ref": None, "from_handoff_id": "hof_a1",
         "last_handoff_id": "hof_a2", "verified": True, "run_id": RUN},
        {"recovery_id": "rec_slow", "operation_id": "op_slow", "status": "running", "limit_exceeded": False,
         "exceeded_limits": [], "mode": "automatic", "authority": "policy:rerun", "max_attempts": 3, "attempts": 1,
         "max_cost_usd": None, "cost_usd": None, "time_limit_s": 60.0, "success_evidence": "outcome_verified",
         "evidence_ref": None, "from_handoff_id": None, "last_handoff_id": None, "verified": False, "run_id": None},
        {"recovery_id": "rec_unplanned", "operation_id": "op_unplanned", "status": "uncertain",
         "limit_exceeded": False, "exceeded_limits": [], "mode": None, "authority": None, "max_attempts": None,
         "attempts": 1, "max_cost_usd": None, "cost_usd": None, "time_limit_s": None, "success_evidence": None,
         "evidence_ref": None, "from_handoff_id": None, "last_handoff_id": None, "verified": False, "run_id": None},
    ]  # fmt: skip


def test_the_time_limit_is_judged_as_of_a_time(store: Path) -> None:
    ((started,),) = [tuple(r.values()) for r in rows(
        store, "SELECT started_at FROM receipt_recoveries WHERE recovery_id = 'rec_slow'")]  # fmt: skip
    sql = ("SELECT status, exceeded_limits, evaluated_at FROM receipt_recoveries_at(?::TIMESTAMP)"
           " WHERE recovery_id = ?")  # fmt: skip
    early = started + timedelta(seconds=30)
    assert rows(store, sql, [early, "rec_slow"]) == [
        {"status": "running", "exceeded_limits": [], "evaluated_at": early}]  # fmt: skip
    assert rows(store, sql, [started + timedelta(seconds=120), "rec_slow"])[0]["exceeded_limits"] == ["time"]
    assert rows(store, sql, [started + timedelta(seconds=120), "rec_slow"])[0]["status"] == "limit_exceeded"
    # a recovery that ended within its limit stays within it; before its start it does not exist
    assert rows(store, sql, [started + timedelta(hours=1), "rec_gone"])[0]["status"] == "failed"
    assert rows(store, sql, [started - timedelta(seconds=1), "rec_slow"]) == []


def test_receipts_recoveries_command(store: Path) -> None:
    out = json.loads(run_cli(store, "receipts", "--recoveries", "--format", "json"))
    assert [(r["operation_id"], r["receipt_state"], r["status"], r["limit_exceeded"]) for r in out][:2] == [
        ("op_cost", None, "limit_exceeded", True), ("op_done", None, "succeeded", False)]  # fmt: skip
    by_op = {r["operation_id"]: r for r in out}
    assert (by_op["op_orph"]["receipt_state"], by_op["op_orph"]["status"]) == ("verified", "succeeded")
    assert len(out) == 6
    verified = json.loads(run_cli(store, "receipts", "--recoveries", "--state", "verified", "--format", "json"))
    assert [r["recovery_id"] for r in verified] == ["rec_orph"]


def test_recoveries_in_the_run_manifest_and_timeline(store: Path) -> None:
    (m,) = rows(store, "SELECT recoveries FROM workflow_manifest_for_run(?)", [RUN])
    assert m == {"recoveries": 2}
    got = rows(store, "SELECT event, subject, actor, detail, record_id FROM business_timeline_for_run(?)"
                      " WHERE event LIKE 'recovery.%' ORDER BY seq", [RUN])  # fmt: skip
    assert got == [
        {"event": "recovery.started", "subject": "op_orph", "actor": "policy:auto_redelegate",
         "detail": "automatic, redelegate, trigger orphaned, max 2 attempts, within 600.0 s, success: outcome_verified",
         "record_id": "rec_orph"},
        {"event": "recovery.attempt", "subject": "op_orph", "actor": None, "detail": "attempt 1, hof_a2, $0.002",
         "record_id": "rec_orph"},
        {"event": "recovery.started", "subject": "op_cost", "actor": "human:alice",
         "detail": "manual, max 1 attempts, max $0.01, success: artifact:fact_check_report", "record_id": "rec_cost"},
        {"event": "recovery.attempt", "subject": "op_cost", "actor": None, "detail": "attempt 1, $0.008",
         "record_id": "rec_cost"},
        {"event": "recovery.attempt", "subject": "op_cost", "actor": None, "detail": "attempt 2, $0.006",
         "record_id": "rec_cost"},
    ]  # fmt: skip
