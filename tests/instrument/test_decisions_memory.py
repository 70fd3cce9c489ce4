"""Decision records, badcases and memory write proposals."""

from __future__ import annotations

import pytest
from instrument_support import Spans
from opentelemetry.trace import StatusCode

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A


def test_decision_keeps_model_and_policy_side_by_side(spans: Spans) -> None:
    with oi.flow_run("game_change", run_id="r"):
        agree = oi.decision_record(
            "quality_review", model_decision="repair", effective_decision="repair", policy_passed=True
        )
        oi.decision_record(
            "quality_review",
            model_decision="repair",
            model_action="REDUCE_BULLET_SPEED",
            effective_decision="repair",
            effective_action="REDUCE_BULLETS_PER_WAVE",
            expected_action="REDUCE_BULLETS_PER_WAVE",
            policy_passed=False,
            reason="action differs from policy",
            evidence_refs=["comparison_report.json.evaluation.checks"],
            iteration=2,
            decision_id="dec_2",
        )
        oi.decision_record("gate", model_decision="accept", effective_decision="human_review", review_required=False)
    first, second, third = (dict(s.attributes) for s in spans.kind("decision"))
    assert first[A.DECISION_ID] == agree
    assert first[A.DECISION_MISMATCH] is False
    assert first[A.DECISION_REVIEW_REQUIRED] is False
    assert first[A.DECISION_POLICY_PASSED] is True
    assert second == {
        A.RECORD_KIND: "decision",
        A.RUN_ID: "r",
        A.DECISION_ID: "dec_2",
        A.DECISION_NAME: "quality_review",
        A.DECISION_MODEL_DECISION: "repair",
        A.DECISION_MODEL_ACTION: "REDUCE_BULLET_SPEED",
        A.DECISION_EFFECTIVE_DECISION: "repair",
        A.DECISION_EFFECTIVE_ACTION: "REDUCE_BULLETS_PER_WAVE",
        A.DECISION_EXPECTED_ACTION: "REDUCE_BULLETS_PER_WAVE",
        A.DECISION_POLICY_PASSED: False,
        A.DECISION_MISMATCH: True,  # same decision, different action
        A.DECISION_REVIEW_REQUIRED: True,
        A.DECISION_REASON: "action differs from policy",
        A.DECISION_EVIDENCE_REFS: ("comparison_report.json.evaluation.checks",),
        A.ITERATION: 2,
    }
    assert third[A.DECISION_MISMATCH] is True
    assert third[A.DECISION_REVIEW_REQUIRED] is False


def test_badcase_keeps_the_raw_output_by_default_bounded(spans: Spans) -> None:
    big = "é" * 40_000  # 80 000 UTF-8 bytes
    with oi.flow_run("w", run_id="r"):
        oi.badcase("json_parse", error=ValueError("Expecting ','"), raw_model_output="{bad", provider="openai")
        oi.badcase("json_parse", error_type="JSONDecodeError", raw_model_output="{bad", capture_content=False)
        oi.badcase("json_parse", error_type="JSONDecodeError", raw_model_output=big)
    kept, off, cut = spans.kind("badcase")
    assert kept.name == "otel_agent.badcase"
    assert kept.status.status_code is StatusCode.UNSET
    assert kept.attributes[A.BADCASE_ERROR_TYPE] == "ValueError"
    assert kept.attributes[A.BADCASE_MESSAGE] == "Expecting ','"
    assert kept.attributes[A.BADCASE_STAGE] == "json_parse"
    assert kept.attributes[A.BADCASE_PROVIDER] == "openai"
    assert kept.attributes[A.BADCASE_RAW_MODEL_OUTPUT] == "{bad"
    assert kept.attributes[A.RUN_ID] == "r"
    assert A.BADCASE_RAW_MODEL_OUTPUT_TRUNCATED not in kept.attributes
    assert A.BADCASE_RAW_MODEL_OUTPUT not in off.attributes  # the agent said no
    out = cut.attributes[A.BADCASE_RAW_MODEL_OUTPUT]
    assert len(out.encode()) == 64 * 1024
    assert out == "é" * (32 * 1024)
    assert cut.attributes[A.BADCASE_RAW_MODEL_OUTPUT_TRUNCATED] is True
    assert cut.attributes[A.BADCASE_RAW_MODEL_OUTPUT_BYTES] == 80_000
    with pytest.raises(oi.InvalidValueError):
        oi.badcase("stage")


def test_memory_proposal(spans: Spans) -> None:
    with oi.flow_run("deep_research", run_id="run_abc"):
        pid = oi.propose_memory(
            "procedural",
            "When coverage is insufficient, use two search providers",
            scopes=[
                oi.MemoryScope("organization", "org_acme"),
                ("project", "proj_research"),
                {"type": "flow", "ref": "deep_research"},
            ],
            rationale="verifier failed on coverage",
            summary="two providers",
        )
    p = spans.one("memory_proposal")
    assert p.name == "otel_agent.memory_proposal"
    assert p.attributes[A.MEMORY_PROPOSAL_ID] == pid
    assert p.attributes[A.MEMORY_PROPOSAL_MEMORY_TYPE] == "procedural"
    assert p.attributes[A.MEMORY_PROPOSAL_SCOPES] == (
        "organization:org_acme",
        "project:proj_research",
        "flow:deep_research",
    )
    assert p.attributes[A.MEMORY_PROPOSAL_SOURCE_RUN_ID] == "run_abc"
    assert p.attributes[A.MEMORY_PROPOSAL_RATIONALE] == "verifier failed on coverage"
    assert p.attributes[A.MEMORY_PROPOSAL_SUMMARY] == "two providers"


def test_memory_validation() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.propose_memory("working", "x", scopes=[("run", "r")], rationale="y")
    with pytest.raises(oi.InvalidValueError):
        oi.propose_memory("semantic", "x", scopes=[("team", "t")], rationale="y")
    with pytest.raises(oi.InvalidValueError):
        oi.propose_memory("semantic", "x", scopes=[], rationale="y")
