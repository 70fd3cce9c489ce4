"""Spans that look like third-party receipts but are not transitions (docs/views-evidence.md, "Third-party
receipts"): each was a survivor of scripts/mutate_sql.py on 050_receipts.sql (issue 37). A span that is taken for
a handoff when it is not gives an operation that is soon "orphaned": a false alarm on the operator's screen."""

from __future__ import annotations

from pathlib import Path

from tests.derived_evidence.support import Store, at, request, span, transition


def transitions_of(tmp_path: Path, *spans: dict) -> list[tuple]:
    s = Store(tmp_path / "lookalikes.duckdb")
    try:
        s.ingest(request(list(spans)))
        assert s.rows("SELECT count(*) FROM spans") == [(len(spans),)]
        rows = s.rows("SELECT operation_id, transition, source FROM receipt_transitions ORDER BY ALL")
        states = s.rows("SELECT operation_id FROM receipt_state_at(?) ORDER BY 1", [at(60)])
        assert states == sorted({(op,) for op, _, _ in rows})  # an operation in the state view for each
        return rows
    finally:
        s.close()


def test_an_openinference_tool_named_like_a_handoff_is_not_one(tmp_path: Path) -> None:
    """An OpenInference TOOL span is a handoff only when named `handoff to <agent>`, as the OpenAI Agents
    instrumentation names it; a tool called `handoff_history` is a tool."""
    tool = span("handoff_history", {"openinference.span.kind": "TOOL", "tool.name": "handoff_history"}, t=1)
    assert transitions_of(tmp_path, tool) == []


def test_an_openinference_handoff_span_is_one(tmp_path: Path) -> None:
    """(The positive twin of the test above, so that it cannot pass by mapping nothing.)"""
    handoff = span("handoff to billing", {"openinference.span.kind": "TOOL"}, t=1, duration_s=1)
    (row,) = {(op.split(":")[0], src) for op, _, src in transitions_of(tmp_path, handoff)}
    assert row == ("handoff", "handoff_span")


def test_an_a2a_task_span_without_a_state_is_not_a_transition(tmp_path: Path) -> None:
    """An A2A span is a transition when it has both a task id and a task state; one with a task id only (here
    named like a handoff, so that it passes the cheap tests) is neither an A2A transition nor a framework
    handoff (a span with an A2A task id never is)."""
    task_only = span("handoff to billing", {"openinference.span.kind": "TOOL", "a2a.task.id": "task_9"}, t=1)
    assert transitions_of(tmp_path, task_only) == []


def test_the_expected_artifact_is_the_delegations_even_when_the_worker_names_another(tmp_path: Path) -> None:
    """The delegation's promise is what the operation is held to: when the acceptance names another artifact,
    the state is uncertain and still shows the delegated one (a survivor too: the artifact taken from any
    transition but the delegation)."""
    s = Store(tmp_path / "artifact.duckdb")
    try:
        s.ingest(
            request(
                [
                    transition("op_a", "hof_a", "delegated", 0, expected_artifact="fact_check_report"),
                    transition("op_a", "hof_a", "accepted", 3, service="worker", expected_artifact="a_summary"),
                ]
            )
        )
        for macro in ("receipt_state_at", "receipt_attempts_at"):
            (row,) = s.dicts(f"SELECT state, expected_artifact, why FROM {macro}(?)", [at(10)])
            assert row["state"] == "uncertain"
            assert row["expected_artifact"] == "fact_check_report"
            assert "expected artifact differs between transitions (a_summary, fact_check_report)" in row["why"]
    finally:
        s.close()
