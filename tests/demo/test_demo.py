"""`otel-agent demo` end to end, in both modes: what lands in DuckDB once the receiver/exporter is closed."""

from __future__ import annotations

import hashlib
import json
import os
import shlex

import pytest
from click.testing import CliRunner

from otel_agent.demo import content as C
from otel_agent.demo.runner import DemoResult
from otel_agent.demo.summary import explore, explore_commands, summarize
from otel_agent.instrument import load_registry
from otel_agent.main import cli
from otel_agent.read.receipts import STATES
from tests.demo.store import KIND, query

AGENT_KINDS = {
    "artifact": 2,
    "artifact_version": 3,
    "authorization": 1,
    "badcase": 1,
    "citation": 10,
    "claim": 7,
    "conflict": 1,
    "decision": 2,
    "evidence_item": 4,
    "flow_run": 1,
    "guard_result": 5,
    "memory_proposal": 1,
    "provider_call": 4,
    "proxy_request": 1,
    "receipt_transition": 4,
    "recovery": 2,
    "repair": 1,
    "skill_invocation": 3,
    "source": 4,
    "step": 5,
    "tool_invocation": 5,
    "verifier_result": 2,
}
WORKER_KINDS = {
    "artifact": 1,
    "artifact_version": 1,
    "flow_run": 1,
    "handoff_work": 1,
    "receipt_transition": 5,
    "skill_invocation": 1,
    "step": 2,
    "tool_invocation": 5,
    "verifier_result": 1,
}


NOT_PENDING = "coalesce(attributes->>'logfire.span_type', '') <> 'pending_span'"
"""Not a pending span: the announcement that a run or step started (docs/views-runs.md "Runs in progress")."""


def by_kind(db: str, service: str) -> dict[str, int]:
    rows = query(
        db, f"SELECT {KIND}, count(*) FROM spans WHERE service_name = ? AND {NOT_PENDING} GROUP BY 1", [service]
    )
    return dict(rows)  # type: ignore[arg-type]


def attrs_of(db: str, record_kind: str, where: str = "TRUE") -> list[dict]:
    rows = query(
        db,
        f"SELECT attributes FROM spans WHERE {KIND} = ? AND {where} AND {NOT_PENDING} ORDER BY start_time",
        [record_kind],
    )
    return [json.loads(r[0]) for r in rows]


def test_span_counts_per_record_kind_and_process(demo: DemoResult) -> None:
    assert by_kind(demo.db, C.AGENT_SERVICE) == AGENT_KINDS
    assert by_kind(demo.db, C.WORKER_SERVICE) == WORKER_KINDS
    assert query(demo.db, f"SELECT count(*) FROM spans WHERE {KIND} IS NULL") == [(0,)]
    # and each run and step was announced when it started, once
    announced = query(demo.db, f"SELECT service_name, count(*) FROM spans WHERE NOT {NOT_PENDING} GROUP BY 1")
    assert dict(announced) == {
        C.AGENT_SERVICE: AGENT_KINDS["flow_run"] + AGENT_KINDS["step"],
        C.WORKER_SERVICE: WORKER_KINDS["flow_run"] + WORKER_KINDS["step"],
    }
    every_kind = {s["record_kind"] for s in load_registry()["spans"]}
    assert set(AGENT_KINDS) | set(WORKER_KINDS) == every_kind  # the demo shows every part


def test_worker_spans_come_from_another_process_and_trace(demo: DemoResult) -> None:
    rows = query(
        demo.db,
        """SELECT service_name, list(DISTINCT resource_attributes->>'process.pid'), list(DISTINCT trace_id)
           FROM spans GROUP BY 1""",
    )
    seen = {service: (pids, traces) for service, pids, traces in rows}
    assert set(seen) == {C.AGENT_SERVICE, C.WORKER_SERVICE}
    agent_pids, agent_traces = seen[C.AGENT_SERVICE]
    worker_pids, worker_traces = seen[C.WORKER_SERVICE]
    assert agent_pids == [str(os.getpid())]  # the agent ran in this (test) process
    assert worker_pids == [str(demo.worker_pid)]
    assert demo.worker_pid != os.getpid()
    assert len(agent_traces) == 1
    assert len(worker_traces) == 1
    assert agent_traces != worker_traces
    run_ids = query(demo.db, "SELECT DISTINCT service_name, attributes->>'otel_agent.run.id' FROM spans ORDER BY 1")
    assert run_ids == [(C.AGENT_SERVICE, C.RUN_ID), (C.WORKER_SERVICE, C.WORKER_RUN_ID)]


def test_search_records_a_retry_then_a_provider_fallback(demo: DemoResult) -> None:
    rows = query(
        demo.db,
        f"""SELECT s.name, s.attributes, list(e.name ORDER BY e.event_index), list(e.attributes ORDER BY e.event_index)
            FROM spans s JOIN span_events e USING (trace_id, span_id)
            WHERE s.{KIND} = 'provider_call' AND s.attributes->>'otel_agent.step.id' = ? GROUP BY ALL""",
        [C.STEP_SEARCH],
    )
    [(name, attrs, names, event_attrs)] = rows
    attrs = json.loads(attrs)
    assert name == "retrieval search"
    assert attrs["gen_ai.provider.name"] == "exa"
    assert attrs["otel_agent.fallback.original_provider"] == "tavily"
    assert attrs["otel_agent.retry.count"] == 1
    assert attrs["otel_agent.fallback.count"] == 1
    assert names == ["otel_agent.retry", "otel_agent.fallback"]
    retry, fallback = (json.loads(a) for a in event_attrs)
    assert retry == {"otel_agent.retry.attempt": 1, "otel_agent.retry.error_type": "timeout"}
    assert fallback["otel_agent.fallback.from_provider"] == "tavily"
    assert fallback["otel_agent.fallback.to_provider"] == "exa"
    assert fallback["otel_agent.fallback.reason"] == "rate_limited"


def test_verify_blocks_the_uncited_claim_and_records_the_conflict(demo: DemoResult) -> None:
    guards = attrs_of(demo.db, "guard_result", f"attributes->>'otel_agent.guard.name' = '{C.GUARD_CITATION}'")
    outcomes = {g["otel_agent.guard.target_id"]: g["otel_agent.guard.outcome"] for g in guards}
    assert outcomes == {
        "claim_demo_draft_graph": "passed",
        "claim_demo_draft_share": "passed",
        "claim_demo_draft_memory": "blocked",
    }
    [blocked] = query(
        demo.db,
        f"SELECT status_code, attributes->>'otel_agent.guard.reason' FROM spans "
        f"WHERE {KIND} = 'guard_result' AND attributes->>'otel_agent.guard.outcome' = 'blocked'",
    )
    assert blocked == ("UNSET", "uncited_claim")  # a block is an outcome, not an error
    [conflict] = attrs_of(demo.db, "conflict")
    assert conflict["otel_agent.conflict.evidence_ids"] == [C.EV["survey_a"], C.EV["survey_b"]]
    assert conflict["otel_agent.conflict.claim_ids"] == ["claim_demo_draft_share"]
    assert conflict["otel_agent.conflict.severity"] == "high"


def test_report_has_two_versions_and_the_regenerated_one_passes(demo: DemoResult) -> None:
    versions = attrs_of(demo.db, "artifact_version", f"attributes->>'otel_agent.artifact.id' = '{C.REPORT_ID}'")
    assert [v["otel_agent.artifact_version.number"] for v in versions] == [1, 2]
    v1, v2 = versions
    assert (v1["otel_agent.artifact_version.id"], v2["otel_agent.artifact_version.id"]) == (C.REPORT_V1, C.REPORT_V2)
    assert "otel_agent.artifact_version.previous_id" not in v1
    assert v2["otel_agent.artifact_version.previous_id"] == C.REPORT_V1
    assert v1["otel_agent.artifact_version.content"].startswith(f"# {C.REPORT_TITLE}")
    assert "Between 25% and 40%" in v2["otel_agent.artifact_version.content"]
    for v in versions:
        content = v["otel_agent.artifact_version.content"]
        assert v["otel_agent.artifact_version.content_sha256"] == hashlib.sha256(content.encode()).hexdigest()
        assert v["otel_agent.artifact_version.source_step_id"] == C.STEP_SYNTHESIZE
    verdicts = [(v["otel_agent.verifier.target_id"], v["otel_agent.verifier.outcome"]) for v in attrs_of(
        demo.db, "verifier_result", "attributes->>'otel_agent.verifier.name' = 'citation_coverage'")]  # fmt: skip
    assert verdicts == [(C.REPORT_V1, "failed"), (C.REPORT_V2, "passed")]
    decision, _ = attrs_of(demo.db, "decision")  # the second: v2 to an editor (test_manifest_authorization_…)
    assert decision["otel_agent.decision.model_decision"] == "publish"
    assert decision["otel_agent.decision.effective_decision"] == "regenerate"
    assert decision["otel_agent.decision.mismatch"] is True
    assert decision["otel_agent.decision.review_required"] is True
    # the repair between the two versions, lined up with each version's evaluation (issue 15)
    history = query(demo.db, "SELECT version_id, evaluation, repair_id, next_version_id, produced_by_repair_id"
                    " FROM candidate_history ORDER BY version")  # fmt: skip
    assert history == [(C.REPORT_V1, "failed", C.REPAIR_ID, C.REPORT_V2, None),
                       (C.REPORT_V2, "passed", None, None, C.REPAIR_ID)]  # fmt: skip


def test_claims_of_v2_trace_back_to_their_sources(demo: DemoResult) -> None:
    lineage = query(
        demo.db,
        f"""SELECT c.attributes->>'otel_agent.claim.id', s.attributes->>'otel_agent.source.id'
            FROM spans c
            JOIN spans ci ON ci.attributes->>'otel_agent.citation.claim_id' = c.attributes->>'otel_agent.claim.id'
            JOIN spans e ON e.attributes->>'otel_agent.evidence.id' = ci.attributes->>'otel_agent.citation.evidence_id'
            JOIN spans s ON s.attributes->>'otel_agent.source.id' = e.attributes->>'otel_agent.evidence.source_id'
            WHERE c.{KIND} = 'claim' AND c.attributes->>'otel_agent.claim.artifact_version_id' = ?
            ORDER BY 1, 2""",
        [C.REPORT_V2],
    )
    assert lineage == [
        ("claim_demo_v2_graph", "src_demo_autogen"),
        ("claim_demo_v2_graph", "src_demo_langgraph"),
        ("claim_demo_v2_share", "src_demo_survey_a"),
        ("claim_demo_v2_share", "src_demo_survey_b"),
    ]


def test_plan_records_skill_context_snapshot_and_badcase(demo: DemoResult) -> None:
    skills = query(demo.db, f"SELECT name FROM spans WHERE {KIND} = 'skill_invocation' ORDER BY start_time")
    assert [s for (s,) in skills] == [
        "skill research-planner@1.0.0",
        "skill citation-verifier@0.3.0",
        "skill report-writer@2.1.0",
        "skill fact-checker@0.9.0",
    ]
    [(attrs, events)] = query(
        demo.db,
        f"""SELECT s.attributes, list(e.name) FROM spans s JOIN span_events e USING (trace_id, span_id)
            WHERE s.{KIND} = 'provider_call' AND s.attributes->>'otel_agent.step.id' = ? GROUP BY ALL""",
        [C.STEP_PLAN],
    )
    attrs = json.loads(attrs)
    assert attrs["otel_agent.context.snapshot_id"] == C.CONTEXT_SNAPSHOT_ID
    assert attrs["otel_agent.context.available_tokens"] == C.CONTEXT_TOTAL_BUDGET - C.CONTEXT_RESPONSE_RESERVE
    assert "gen_ai.input.messages" in attrs  # capture is switched on for the demo run, explicitly
    assert events.count("otel_agent.context.allocation") == 10
    assert events.count("otel_agent.context.compression") == 1
    assert events.count("otel_agent.retry") == 1
    context_ids = query(
        demo.db,
        """SELECT e.name, e.attributes->>'otel_agent.context.block.id',
                  e.attributes->>'otel_agent.context.block.status', e.attributes->>'otel_agent.context.compression.id',
                  e.attributes->>'otel_agent.context.compression.block_id'
           FROM span_events e JOIN spans s USING (trace_id, span_id)
           WHERE s.attributes->>'otel_agent.step.id' = ? AND e.name IN ('otel_agent.context.block',
                 'otel_agent.context.compression') AND (e.attributes->>'otel_agent.context.block.source_ref'
                 = 'step_local_tools' OR e.name = 'otel_agent.context.compression')
           ORDER BY e.event_index""",
        [C.STEP_PLAN],
    )
    assert context_ids == [  # ids the demo gives: the step-local tool block's, and the compression's from its block
        ("otel_agent.context.block", C.PLANNER_TOOL_BLOCK_ID, "included", None, None),
        ("otel_agent.context.compression", None, None, "cmp_blk_demo_instructions", "blk_demo_instructions"),
    ]
    [bad] = attrs_of(demo.db, "badcase")
    assert bad["otel_agent.badcase.stage"] == "json_parse"
    assert bad["otel_agent.badcase.error_type"] == "JSONDecodeError"
    assert bad["otel_agent.badcase.raw_model_output"] == C.PLANNER_BAD_OUTPUT
    [memory] = attrs_of(demo.db, "memory_proposal")
    assert memory["otel_agent.memory_proposal.source_run_id"] == C.RUN_ID
    assert "flow:deep_research" in memory["otel_agent.memory_proposal.scopes"]
    [run] = attrs_of(demo.db, "flow_run", f"attributes->>'otel_agent.run.id' = '{C.RUN_ID}'")
    assert run["otel_agent.run.usage.model_calls"] == 4
    assert run["otel_agent.run.usage.tool_calls"] == 5
    assert run["otel_agent.run.budget.exceeded"] is False


def transitions(db: str, handoff_id: str) -> list[tuple[str, str]]:
    rows = query(
        db,
        f"""SELECT attributes->>'otel_agent.receipt.transition', service_name FROM spans
            WHERE {KIND} = 'receipt_transition' AND attributes->>'otel_agent.receipt.handoff_id' = ?
            ORDER BY start_time""",
        [handoff_id],
    )
    return [(t, s) for t, s in rows]


def test_fact_check_receipt_transitions_and_the_handoff_link(demo: DemoResult) -> None:
    agent, worker = C.AGENT_SERVICE, C.WORKER_SERVICE
    assert demo.fact_check_handoff_id == C.FACT_CHECK_HANDOFF_ID  # given to delegate(), not minted
    assert transitions(demo.db, demo.fact_check_handoff_id) == [
        ("delegated", agent),
        ("accepted", worker),
        ("progress", worker),
        ("waiting", worker),
        ("progress", worker),
        ("completed", worker),
        ("outcome_verified", agent),
    ]
    [waiting] = attrs_of(demo.db, "receipt_transition", "attributes->>'otel_agent.receipt.transition' = 'waiting'")
    assert waiting["otel_agent.receipt.waiting_for"] == C.WAITING_FOR
    [completed] = attrs_of(demo.db, "receipt_transition", "attributes->>'otel_agent.receipt.transition' = 'completed'")
    assert completed["otel_agent.receipt.artifact_ref"] == C.FACT_CHECK_VERSION_ID
    links = query(
        demo.db,
        """SELECT w.name, d.name, d.attributes->>'otel_agent.receipt.handoff_id', l.attributes->>'otel_agent.link.type'
           FROM span_links l JOIN spans w USING (trace_id, span_id)
           JOIN spans d ON d.trace_id = l.linked_trace_id AND d.span_id = l.linked_span_id
           ORDER BY w.name""",
    )
    assert links == [
        ("otel_agent.handoff.work", "otel_agent.receipt.delegated", demo.fact_check_handoff_id, "handoff"),
        ("otel_agent.receipt.accepted", "otel_agent.receipt.delegated", demo.fact_check_handoff_id, "handoff"),
    ]
    [(kind,)] = query(demo.db, "SELECT kind FROM spans WHERE name = 'otel_agent.receipt.delegated' LIMIT 1")
    assert kind == "PRODUCER"


def test_the_translation_delegation_is_never_accepted(demo: DemoResult) -> None:
    assert demo.translate_handoff_id == C.TRANSLATE_HANDOFF_ID
    assert transitions(demo.db, demo.translate_handoff_id) == [("delegated", C.AGENT_SERVICE)]
    [delegated] = attrs_of(
        demo.db, "receipt_transition", f"attributes->>'otel_agent.receipt.handoff_id' = '{demo.translate_handoff_id}'"
    )
    assert delegated["otel_agent.receipt.operation_id"] == C.TRANSLATE_OPERATION
    assert delegated["otel_agent.receipt.target"] == C.TRANSLATE_TARGET


def test_manifest_authorization_verdict_and_recovery(demo: DemoResult) -> None:
    """Issue 15 items 3, 4, 12 in the demo's story: the approval the worker waits for is an authorization, an
    editor answers the human_review decision on report v2, and the offline translator gets a bounded recovery."""
    [m] = query(
        demo.db,
        "SELECT authorized, authorized_by, authorization_scope, final_decision, final_decision_source,"
        " final_decided_by, final_decision_id, pending_human_reviews, repairs, recoveries"
        " FROM workflow_manifest_for_run(?)",
        [demo.run_id],
    )
    assert m == (True, C.APPROVER, C.WAITING_FOR, "approve", "human", C.EDITOR, C.PUBLISH_V2_DECISION_ID, 0, 1, 1)
    [r] = query(
        demo.db,
        "SELECT operation_id, status, limit_exceeded, authority, max_attempts, attempts, from_handoff_id,"
        " last_handoff_id, success_evidence FROM receipt_recoveries",
    )
    assert r == (C.TRANSLATE_OPERATION, "running", False, C.RECOVERY_AUTHORITY, 1, 1, C.TRANSLATE_HANDOFF_ID,
                 C.TRANSLATE_RETRY_HANDOFF_ID, "outcome_verified")  # fmt: skip
    events = [e for (e,) in query(demo.db, "SELECT event FROM business_timeline_for_run(?) ORDER BY seq",
                                  [demo.run_id])]  # fmt: skip
    expected = ["authorization.granted", "repair.applied", "recovery.started", "recovery.attempt", "review.approved",
                "guard.blocked", "proxy_fallback", "evidence.added", "artifact.created"]  # fmt: skip
    assert [e for e in expected if e not in events] == []
    assert events[-1] == "review.approved"  # the editor answered after the run ended


def test_summary_and_every_explore_command_work_on_the_store(demo: DemoResult) -> None:
    text = summarize(demo.db, demo.run_id)
    for expected in (
        C.RUN_ID,
        "receipt_transition",
        "tavily/search -> exa/search (rate_limited)",
        "blocked claim_demo_draft_memory (uncited_claim)",
        C.REPORT_V2,
    ):
        assert expected in text
    text_commands = [
        line.strip() for line in explore(demo.db, demo.run_id).splitlines() if line.startswith("  otel-agent ")
    ]
    commands = explore_commands(demo.db, demo.run_id)
    assert text_commands == [command for _, command in commands]
    names = [shlex.split(command)[1] for _, command in commands]
    assert names[:5] == ["runs", "run", "claims", "lineage", "receipts"]
    assert "ui" in names
    assert "sql" not in names
    for title, command in commands:
        args = shlex.split(command)[1:]
        if args[0] not in cli.commands:  # `ui` is the console's command, registered by its own module
            assert args[0] == "ui", title
            continue
        if args[0] == "ui":
            continue  # a server; the console's tests run it
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, (title, result.output)
        assert result.output.strip(), title


def test_summary_says_the_receipts_commands_states(demo: DemoResult) -> None:
    """The demo summary and `otel-agent receipts` name the same state for each operation, by the same rules."""
    result = CliRunner().invoke(cli, ["receipts", "--db", demo.db, "--format", "json"], catch_exceptions=False)
    states = {r["operation_id"]: r["state"] for r in json.loads(result.output)}
    assert states == {C.FACT_CHECK_OPERATION: "verified", C.TRANSLATE_OPERATION: "waiting"}
    section = summarize(demo.db, demo.run_id).split("Handoff receipts")[1].split("Artifact versions")[0]
    rows = {line.split()[0]: line.split()[1] for line in section.splitlines()[3:] if line.strip()}
    assert rows == states
    assert set(rows.values()) <= set(STATES)  # not transition names (delegated, outcome_verified)


@pytest.mark.parametrize("mode", ["otlp", "embedded"])
def test_summary_reports_each_mode(mode: str, request: pytest.FixtureRequest) -> None:
    result: DemoResult = request.getfixturevalue(f"{mode}_demo")
    assert result.mode == mode
    assert (result.endpoint is not None) == (mode == "otlp")
    assert result.report_versions == (C.REPORT_V1, C.REPORT_V2)
