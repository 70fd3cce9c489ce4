"""Issue 15 item 1: a model call's data dependencies, from the helper arguments to provider_calls,
call_dependencies and `otel-agent dependencies`."""

from __future__ import annotations

import json
from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_fixture


def record() -> None:
    with oi.flow_run("game_change", run_id="run_gc"):
        with oi.step("design"):
            art = oi.create_artifact("comparison_report.json", artifact_type="evidence_bundle", artifact_id="art_cmp")
            v1 = art.add_version("{}", version_id="artv_cmp_1")
        for round_ in (1, 2):
            with oi.step("quality_review", iteration=round_):
                with oi.provider_call(
                    "openai",
                    "gpt-4o",
                    agent_name="quality_review_agent",
                    prompt_name="quality_review",
                    prompt_version="3",
                    iteration=round_,
                    input_artifacts=["requirement.json", v1] if round_ == 2 else ["requirement.json"],
                ) as review:
                    review.set_token_estimate(2400)
                    review.set_output_artifacts([f"quality_reviews_{round_}.json"])
                with oi.tool_invocation("schema_check", input_artifacts=["comparison_report.json"]):
                    pass


db = store_fixture(record)


def test_provider_calls_carry_the_dependencies(db: Path) -> None:
    got = rows(
        db,
        "SELECT iteration, prompt_name, prompt_version, agent_name, input_artifacts, output_artifacts,"
        " token_estimate, input_tokens FROM provider_calls ORDER BY iteration",
    )
    assert got == [
        {"iteration": 1, "prompt_name": "quality_review", "prompt_version": "3",
         "agent_name": "quality_review_agent", "input_artifacts": ["requirement.json"],
         "output_artifacts": ["quality_reviews_1.json"], "token_estimate": 2400, "input_tokens": None},
        {"iteration": 2, "prompt_name": "quality_review", "prompt_version": "3",
         "agent_name": "quality_review_agent", "input_artifacts": ["requirement.json", "artv_cmp_1"],
         "output_artifacts": ["quality_reviews_2.json"], "token_estimate": 2400, "input_tokens": None},
    ]  # fmt: skip
    tools = rows(db, "SELECT iteration, input_artifacts, output_artifacts FROM tool_invocations ORDER BY 1")
    assert tools == [{"iteration": None, "input_artifacts": ["comparison_report.json"], "output_artifacts": []}] * 2


def test_what_quality_review_round_2_depended_on_and_produced(db: Path) -> None:
    got = rows(
        db,
        "SELECT call_kind, direction, ref, artifact_id, artifact_version FROM call_dependencies"
        " WHERE step_name = 'quality_review' AND iteration = 2 ORDER BY call_kind, direction, position",
    )
    assert got == [
        {"call_kind": "provider_call", "direction": "input", "ref": "requirement.json", "artifact_id": None,
         "artifact_version": None},
        {"call_kind": "provider_call", "direction": "input", "ref": "artv_cmp_1", "artifact_id": "art_cmp",
         "artifact_version": 1},
        {"call_kind": "provider_call", "direction": "output", "ref": "quality_reviews_2.json", "artifact_id": None,
         "artifact_version": None},
        # the tool names the artifact by its name; its round is its step's
        {"call_kind": "tool_invocation", "direction": "input", "ref": "comparison_report.json",
         "artifact_id": "art_cmp", "artifact_version": None},
    ]  # fmt: skip
    out = json.loads(run_cli(db, "dependencies", "--of", "quality_review", "--iteration", "2", "--format", "json"))
    assert [(r["direction"], r["ref"]) for r in out] == [
        ("input", "requirement.json"),
        ("input", "artv_cmp_1"),
        ("output", "quality_reviews_2.json"),
        ("input", "comparison_report.json"),
    ]
    assert {r["prompt_name"] for r in out} == {"quality_review", None}
    table = run_cli(db, "dependencies", "--run", "run_gc", "--iteration", "1")
    assert "quality_reviews_1.json" in table
    assert "quality_reviews_2.json" not in table
