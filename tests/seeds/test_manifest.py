"""Issue 15 item 4 (and item 3 through it): seed 001's workflow manifest and business timeline, written through
the public helpers (a third-party GenAI apply_guardrail span among them), read back from the views and from
`otel-agent manifest` — and a human verdict on the human_review decision, given with `otel-agent review`,
becomes the run's final decision."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

import otel_agent.instrument as oi
from otel_agent.fold.redact import is_credential_key
from tests.seeds.support import provider_store_fixture, rows, run_cli

RUN = "run_gc_manifest"
FAILED = "run_gc_failed"


def record(provider: TracerProvider) -> None:
    tracer = provider.get_tracer("third.party.guardrails")
    with oi.flow_run("game_change", run_id=RUN, target="unity", max_model_calls=2, max_cost_usd=1.0):
        with oi.step("requirement"):
            with oi.provider_call("openai_compatible", "gpt-4o", prompt_name="requirement_agent") as call:
                call.set_cost(0.01)
            oi.guard_result("schema", passed=True, stage="schema", reason="valid")
            # a third-party gate: the GenAI conventions' apply_guardrail span, nothing of ours on it
            with tracer.start_as_current_span(
                "apply_guardrail safety",
                attributes={"gen_ai.operation.name": "apply_guardrail", "gen_ai.guardrail.name": "safety_gate",
                            "gen_ai.guardrail.verdict.type": "deny", "gen_ai.guardrail.verdict.reason": "unsafe_speed",
                            "gen_ai.guardrail.target.type": "output"},
            ):  # fmt: skip
                pass
        oi.authorization("unity_runs:3", authorized_by="bob", granted=False, reason="budget not set")
        oi.authorization("unity_runs:3", authorized_by="alice", reason="baseline reviewed", authorization_id="auth_1")
        with oi.step("quality_review", iteration=1):
            with oi.provider_call("openai_compatible", "gpt-4o", iteration=1):
                pass
            oi.decision_record("quality_review", model_decision="repair", model_action="REDUCE_BULLETS_PER_WAVE",
                               effective_decision="repair", effective_action="REDUCE_BULLETS_PER_WAVE",
                               policy_passed=True, iteration=1, decision_id="dec_m1")  # fmt: skip
            cand = oi.create_artifact("candidate_config", artifact_type="candidate", artifact_id="art_cand")
            v1 = cand.add_version('{"bullets_per_wave": 30}', version_id="artv_c1", iteration=1)
            v2 = cand.add_version('{"bullets_per_wave": 22}', version_id="artv_c2", iteration=2)
            oi.repair("REDUCE_BULLETS_PER_WAVE", applied=True, iteration=1, target="bullets_per_wave", before=30,
                      after=22, reason="peak 420 > 350", computed_by_name="bounded_repair_tool", from_version_id=v1,
                      to_version_id=v2, repair_id="rep_m1")  # fmt: skip
        with oi.step("quality_review", iteration=2):
            with oi.provider_call("openai_compatible", "gpt-4o", iteration=2) as call:  # over the model budget
                call.fallback(to_provider="backup", reason="rate_limited")
            src = oi.source("https://telemetry.example/run", source_id="src_t")
            oi.evidence_item(src, "peak_alive_bullets=330", confidence="high", evidence_id="ev_t")
            oi.decision_record("quality_review", model_decision="accept", model_action="NONE",
                               effective_decision="human_review", effective_action="REDUCE_BULLET_SPEED",
                               expected_action="REDUCE_BULLET_SPEED", policy_passed=False, iteration=2,
                               reason="agent and policy disagree", decision_id="dec_m2")  # fmt: skip
    try:
        with oi.flow_run("game_change", run_id=FAILED), oi.step("engine_run"):
            oi.authorization("unity_runs:1", authorized_by="alice")
            with oi.tool_invocation("unity"):
                raise EngineLaunchError("failed to launch")
    except EngineLaunchError:
        pass


class EngineLaunchError(RuntimeError):
    """The engine did not start (a tool / environment failure, not the model's)."""


store = provider_store_fixture(record)


def manifest(db: Path, run_id: str) -> dict:
    (row,) = rows(db, "SELECT * FROM workflow_manifest_for_run(?)", [run_id])
    return row


def test_manifest_answers_where_the_run_is(store: Path) -> None:
    m = manifest(store, RUN)
    assert {k: m[k] for k in (
        "workflow_name", "status", "target", "provider", "providers", "current_step", "current_iteration",
        "authorized", "authorized_by", "authorization_scope", "authorizations", "budget_max_model_calls",
        "model_calls_used", "budget_max_cost_usd", "cost_used_usd", "budget_exceeded", "budget_exceeded_limits",
        "final_decision", "final_decision_source", "final_decided_by", "final_decision_id", "decisions",
        "pending_human_reviews", "repairs", "recoveries", "guard_blocks", "error_type", "failed_step")} == {
        "workflow_name": "game_change", "status": "ok", "target": "unity", "provider": "openai_compatible",
        "providers": ["openai_compatible", "backup"], "current_step": "quality_review", "current_iteration": 2,
        "authorized": True, "authorized_by": "alice", "authorization_scope": "unity_runs:3", "authorizations": 2,
        "budget_max_model_calls": 2, "model_calls_used": 3, "budget_max_cost_usd": 1.0, "cost_used_usd": 0.01,
        "budget_exceeded": True, "budget_exceeded_limits": ["model_calls"], "final_decision": "human_review",
        "final_decision_source": "policy_gate", "final_decided_by": None, "final_decision_id": "dec_m2",
        "decisions": 2, "pending_human_reviews": 1, "repairs": 1, "recoveries": 0, "guard_blocks": 1,
        "error_type": None, "failed_step": None,
    }  # fmt: skip
    failed = manifest(store, FAILED)
    view = rows(store, "SELECT * FROM workflow_manifest ORDER BY run_id")
    assert [r["run_id"] for r in view] == [FAILED, RUN]
    assert view == [failed, m]  # the view is the per-run macro over every run
    assert (failed["status"], failed["error_type"], failed["failed_step"]) == ("error", "EngineLaunchError",
                                                                               "engine_run")  # fmt: skip
    assert (failed["target"], failed["provider"], failed["final_decision"]) == (None, None, None)


def test_business_timeline_in_time_order(store: Path) -> None:
    got = rows(
        store,
        "SELECT event, subject, outcome, layer, reason, actor, detail, agent_output, policy_gate, effective, iteration,"
        " record_id FROM business_timeline_for_run(?) ORDER BY seq",
        [RUN],
    )
    assert [(r["event"], r["subject"]) for r in got] == [
        ("run.started", "game_change"),
        ("step.started", "requirement"),
        ("guard.passed", "schema"),
        ("guard.blocked", "safety_gate"),  # the third-party apply_guardrail span
        ("step.succeeded", "requirement"),
        ("authorization.refused", "unity_runs:3"),
        ("authorization.granted", "unity_runs:3"),
        ("step.started", "quality_review"),
        ("decision.recorded", "quality_review"),
        ("artifact.created", "art_cand"),
        ("artifact.version_created", "art_cand"),
        ("artifact.version_created", "art_cand"),
        ("repair.applied", "REDUCE_BULLETS_PER_WAVE"),
        ("step.succeeded", "quality_review"),
        ("step.started", "quality_review"),
        ("budget.exceeded", "model_calls"),  # when the third call started
        ("proxy_fallback", "openai_compatible/gpt-4o -> backup/gpt-4o"),
        ("evidence.added", "ev_t"),
        ("decision.recorded", "quality_review"),
        ("step.succeeded", "quality_review"),
        ("run.succeeded", "game_change"),
    ]
    by_event = {(r["event"], r["record_id"] or r["subject"]): r for r in got}
    blocked = by_event[("guard.blocked", "safety_gate")]
    assert (blocked["outcome"], blocked["layer"], blocked["reason"]) == ("blocked", "output", "unsafe_speed")
    gate = by_event[("guard.passed", "schema")]
    assert (gate["outcome"], gate["layer"], gate["reason"]) == ("passed", "schema", "valid")
    second = by_event[("decision.recorded", "dec_m2")]
    assert {k: second[k] for k in ("outcome", "layer", "agent_output", "policy_gate", "effective", "iteration")} == {
        "outcome": "human_review", "layer": "policy_gate", "agent_output": "accept NONE",
        "policy_gate": "failed, expected REDUCE_BULLET_SPEED", "effective": "human_review REDUCE_BULLET_SPEED",
        "iteration": 2,
    }  # fmt: skip
    repair = by_event[("repair.applied", "rep_m1")]
    assert (repair["actor"], repair["detail"], repair["reason"]) == (
        "deterministic:bounded_repair_tool", "bullets_per_wave: 30 -> 22", "peak 420 > 350")  # fmt: skip
    (refused,) = [r for r in got if r["event"] == "authorization.refused"]
    assert (refused["actor"], refused["outcome"], refused["reason"]) == ("bob", "refused", "budget not set")
    assert by_event[("budget.exceeded", "model_calls")]["detail"] == "used 3.0 > limit 2.0"
    assert by_event[("proxy_fallback", "openai_compatible/gpt-4o -> backup/gpt-4o")]["reason"] == "rate_limited"
    failed = rows(store, "SELECT event, reason FROM business_timeline WHERE run_id = ? ORDER BY seq", [FAILED])
    assert [r["event"] for r in failed] == [
        "run.started", "step.started", "authorization.granted", "step.failed", "run.failed"]  # fmt: skip


def test_a_human_verdict_becomes_the_final_decision(store: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(store.read_bytes())  # the module's store stays unreviewed
    out = run_cli(db, "review", "approve", "decision", "dec_m2", "--reviewer", "carol", "--reason", "policy right")
    assert "approve decision dec_m2 by carol" in out
    (d,) = rows(db, "SELECT human_verdict, human_reviewer FROM decisions WHERE decision_id = 'dec_m2'")
    assert d == {"human_verdict": "approve", "human_reviewer": "carol"}  # item 3, as the decisions view shows it
    m = manifest(db, RUN)
    assert {k: m[k] for k in ("final_decision", "final_decision_source", "final_decided_by", "pending_human_reviews")
            } == {"final_decision": "approve", "final_decision_source": "human", "final_decided_by": "carol",
                  "pending_human_reviews": 0}  # fmt: skip
    (review,) = rows(db, "SELECT event, subject, outcome, layer, actor, reason, seq FROM business_timeline"
                         " WHERE run_id = ? AND event LIKE 'review.%'", [RUN])  # fmt: skip
    assert review == {"event": "review.approved", "subject": "decision dec_m2", "outcome": "approve",
                      "layer": "human", "actor": "carol", "reason": "policy right", "seq": 22}  # fmt: skip
    text = run_cli(db, "manifest", RUN)
    assert "final decision:       approve (human, by carol; decision dec_m2)" in text


def test_manifest_command(store: Path) -> None:
    text = run_cli(store, "manifest", RUN)
    lines = text.splitlines()
    assert lines[:13] == [
        f"run:                  {RUN}  game_change",
        "status:               ok",
        "provider:             openai_compatible (all: openai_compatible, backup)",
        "target:               unity",
        lines[4],  # the time varies
        "budget model calls:   3 of 2 EXCEEDED",
        "budget tool calls:    0",
        "budget cost:          $0.010000 of $1.000000",
        "current step:         quality_review",
        "current iteration:    2",
        "final decision:       human_review (policy_gate; decision dec_m2)  1 human review(s) pending",
        "repairs / recoveries: 1 / 0",
        "error:                -",
    ]
    assert lines[4].startswith("authorization:        granted by alice at ")
    assert lines[4].endswith("(scope unity_runs:3; 2 recorded)")
    assert "guard.blocked" in text
    (row,) = [line for line in lines if "decision.recorded" in line and "human_review" in line]
    assert "agent and policy disag" in row  # the reason, then agent / policy gate / effective (cut to the terminal)
    as_json = json.loads(run_cli(store, "manifest", RUN, "--format", "json"))
    assert [(r["run_id"], r["final_decision_id"]) for r in as_json] == [(RUN, "dec_m2")]
    timeline = json.loads(run_cli(store, "manifest", RUN, "--timeline", "--format", "json"))
    assert [r["seq"] for r in timeline] == list(range(1, 22))
    assert timeline[3]["event"] == "guard.blocked"


def test_unknown_run_is_an_error(store: Path) -> None:
    from click.testing import CliRunner

    from otel_agent.main import cli

    result = CliRunner().invoke(cli, ["manifest", "run_nope", "--db", str(store)])
    assert result.exit_code == 2
    assert "no run 'run_nope'" in result.output


def test_no_registered_attribute_is_dropped_by_the_default_redaction() -> None:
    # an attribute named like a credential (otel_agent.authorization.by) would be dropped at the receiver
    names = [a["name"] for a in oi.load_registry()["attributes"]]
    assert [n for n in names if is_credential_key(n)] == []
