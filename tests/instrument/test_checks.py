"""Guard and verifier results."""

from __future__ import annotations

import pytest
from instrument_support import Spans, parent_id, span_id
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A


def test_guard_result_blocked_is_an_outcome_not_an_error(spans: Spans) -> None:
    with oi.flow_run("w", run_id="r"), oi.step("verify") as st:
        outcome = oi.guard_result(
            "output.citation_required",
            passed=False,
            reason="uncited_claim",
            stage="output",
            target_id="claim_1",
        )
    assert outcome == "blocked"
    g = spans.one("guard_result")
    assert g.name == "apply_guardrail output.citation_required"
    assert g.kind is SpanKind.INTERNAL
    assert g.status.status_code is StatusCode.UNSET
    assert parent_id(g) == span_id(spans.one("step"))
    assert dict(g.attributes) == {
        A.GEN_AI_OPERATION_NAME: "apply_guardrail",
        A.RECORD_KIND: "guard_result",
        A.RUN_ID: "r",
        A.STEP_ID: st.step_id,
        A.GUARD_NAME: "output.citation_required",
        A.GUARD_STAGE: "output",
        A.GUARD_TARGET_ID: "claim_1",
        A.GUARD_OUTCOME: "blocked",
        A.GUARD_REASON: "uncited_claim",
    }


def test_guard_context_manager_times_the_check(spans: Spans) -> None:
    with oi.guard("input.length") as g:
        g.passed()
    with oi.guard("tool.permission"):
        pass  # no outcome given
    passed, unset = spans.kind("guard_result")
    assert passed.attributes[A.GUARD_OUTCOME] == "passed"
    assert A.GUARD_REASON not in passed.attributes
    assert A.GUARD_OUTCOME not in unset.attributes


def test_verifier(spans: Spans) -> None:
    with oi.verifier("citation_coverage", target_id="artv_1") as v:
        with oi.provider_call("openai", "gpt-4o-mini"):
            pass
        v.set_result(False, score=0.4, reason="coverage_insufficient")
    assert oi.verifier_result("schema", passed=True) == "passed"
    first, second = spans.kind("verifier_result")
    assert first.name == "verify citation_coverage"
    assert first.kind is SpanKind.INTERNAL
    assert first.attributes[A.VERIFIER_OUTCOME] == "failed"
    assert first.attributes[A.VERIFIER_SCORE] == 0.4
    assert first.attributes[A.VERIFIER_REASON] == "coverage_insufficient"
    assert first.attributes[A.VERIFIER_TARGET_ID] == "artv_1"
    assert first.status.status_code is StatusCode.UNSET
    assert parent_id(spans.one("provider_call")) == span_id(first)
    assert second.attributes[A.VERIFIER_OUTCOME] == "passed"
    assert A.VERIFIER_SCORE not in second.attributes


def test_check_validation() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.guard("")
    with oi.verifier("v") as v, pytest.raises(oi.InvalidValueError):
        v.set_result(True, score="high")  # type: ignore[arg-type]
