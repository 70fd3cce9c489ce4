"""Issue 15 item 2: repair records through oi.repair, the repairs and candidate_history views, and
`otel-agent repairs` / `otel-agent candidates`."""

from __future__ import annotations

import json
from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_fixture


def record() -> None:
    with oi.flow_run("game_change", run_id="run_gc"):
        cand = oi.create_artifact("candidate_config.json", artifact_type="candidate", artifact_id="art_cand")
        with oi.step("propose", iteration=0):
            v1 = cand.add_version('{"bullets_per_wave": 30}', version_id="artv_cand_1")
        with oi.step("engine_run", iteration=1):
            oi.verifier_result("peak_alive_bullets", passed=False, score=420, reason="420 > 350", target_id=v1)
        with oi.step("repair", iteration=1):
            v2 = cand.add_version('{"bullets_per_wave": 22}', version_id="artv_cand_2", iteration=1)
            oi.repair(
                "REDUCE_BULLETS_PER_WAVE",
                applied=True,
                iteration=1,
                target="candidate_config.bullets_per_wave",
                before=30,
                after=22,
                reason="peak_alive_bullets 420 > 350",
                computed_by="deterministic",
                computed_by_name="bounded_repair_tool",
                from_version_id=v1,
                to_version_id=v2,
                repair_id="rep_1",
            )
        with oi.step("engine_run", iteration=2):
            oi.verifier_result("peak_alive_bullets", passed=True, score=330, target_id=v2)
            oi.repair(
                "REDUCE_BULLET_SPEED",
                applied=False,
                iteration=2,
                reason="bound: at most one repair per round once passing",
                computed_by="model",
                computed_by_name="gpt-4o",
                from_version_id=v2,
                repair_id="rep_2",
            )


db = store_fixture(record)


def test_repairs_view(db: Path) -> None:
    got = rows(
        db,
        "SELECT repair_id, iteration, action, applied, target, before, after, computed_by, computed_by_name,"
        " from_version_id, to_version_id, artifact_id, run_id FROM repairs ORDER BY repair_id",
    )
    assert got == [
        {"repair_id": "rep_1", "iteration": 1, "action": "REDUCE_BULLETS_PER_WAVE", "applied": True,
         "target": "candidate_config.bullets_per_wave", "before": "30", "after": "22",
         "computed_by": "deterministic", "computed_by_name": "bounded_repair_tool",
         "from_version_id": "artv_cand_1", "to_version_id": "artv_cand_2", "artifact_id": "art_cand",
         "run_id": "run_gc"},
        {"repair_id": "rep_2", "iteration": 2, "action": "REDUCE_BULLET_SPEED", "applied": False,
         "target": None, "before": None, "after": None, "computed_by": "model", "computed_by_name": "gpt-4o",
         "from_version_id": "artv_cand_2", "to_version_id": None, "artifact_id": "art_cand", "run_id": "run_gc"},
    ]  # fmt: skip
    out = json.loads(run_cli(db, "repairs", "--run", "run_gc", "--format", "json"))
    assert [(r["repair_id"], r["computed_by"], r["applied"]) for r in out] == [
        ("rep_1", "deterministic", True),
        ("rep_2", "model", False),
    ]


def test_candidate_history_lines_up_candidate_evaluation_and_repair(db: Path) -> None:
    got = rows(
        db,
        "SELECT version, iteration, content, produced_by_repair_id, evaluations, evaluation_passed, evaluation,"
        " evaluation_score, repair_id, repair_action, repair_applied, repair_before, repair_after, next_version_id"
        " FROM candidate_history ORDER BY version",
    )
    assert got == [
        {"version": 1, "iteration": 0, "content": '{"bullets_per_wave": 30}', "produced_by_repair_id": None,
         "evaluations": 1, "evaluation_passed": False, "evaluation": "failed", "evaluation_score": 420.0,
         "repair_id": "rep_1", "repair_action": "REDUCE_BULLETS_PER_WAVE", "repair_applied": True,
         "repair_before": "30", "repair_after": "22", "next_version_id": "artv_cand_2"},
        {"version": 2, "iteration": 1, "content": '{"bullets_per_wave": 22}', "produced_by_repair_id": "rep_1",
         "evaluations": 1, "evaluation_passed": True, "evaluation": "passed", "evaluation_score": 330.0,
         "repair_id": "rep_2", "repair_action": "REDUCE_BULLET_SPEED", "repair_applied": False,
         "repair_before": None, "repair_after": None, "next_version_id": None},
    ]  # fmt: skip
    table = run_cli(db, "candidates", "art_cand")
    assert "REDUCE_BULLETS_PER_WAVE" in table
    assert "artv_cand_2" in table
