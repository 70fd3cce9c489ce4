"""The delegating agent: a deep research run, plan -> search -> verify -> synthesize -> fact-check handoff.

Every "model" and "tool" answers from ``content``; what is real is the telemetry: each helper of
``otel_agent.instrument`` is used the way an agent would use it, through the TracerProvider it is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from opentelemetry.sdk.trace import TracerProvider

import otel_agent.instrument as oi
from otel_agent.demo import content as C
from otel_agent.demo.channel import WorkerProcess

StartWorker = Callable[[dict[str, str], str, str], WorkerProcess]  # (carrier, subject, expected artifact)
Echo = Callable[[str], None]


@dataclass
class ResearchResult:
    run_id: str
    report_versions: tuple[str, ...]
    fact_check_handoff_id: str
    translate_handoff_id: str
    worker_pid: int
    worker_artifact_ref: str


def run_research(provider: TracerProvider, start_worker: StartWorker, echo: Echo = lambda _: None) -> ResearchResult:
    with oi.flow_run(
        C.WORKFLOW,
        run_id=C.RUN_ID,
        max_model_calls=C.BUDGET_MAX_MODEL_CALLS,
        max_tool_calls=C.BUDGET_MAX_TOOL_CALLS,
        max_cost_usd=C.BUDGET_MAX_COST_USD,
        agent_name=C.AGENT_NAME,
        capture_content=True,  # the demo's prompts are synthetic: show what capture records
        tracer_provider=provider,
    ) as run:
        plan(echo)
        search(echo)
        verify(echo)
        versions = synthesize(echo)
        fact_check, translate, worker_pid, artifact_ref = hand_off(versions[-1], start_worker, echo)
        return ResearchResult(run.run_id, versions, fact_check, translate, worker_pid, artifact_ref)


def plan(echo: Echo) -> None:
    with oi.step("plan", step_id=C.STEP_PLAN), oi.skill(*C.SKILL_PLANNER[:2], invocation_id=C.SKILL_PLANNER[2]):
        oi.guard_result("input.length", passed=True, reason="within_limit", stage="input")
        snapshot = oi.assemble_context(
            [
                oi.ContextBlock(
                    "instructions", C.PLANNER_INSTRUCTIONS, priority=50, block_id="blk_demo_instructions",
                    source_ref="flow:deep_research",
                ),
                oi.ContextBlock(
                    "skill_guidance", C.PLANNER_SKILL_GUIDANCE, priority=40, block_id="blk_demo_skill_guidance",
                    source_ref="skill:research-planner@1.0.0",
                ),
                oi.ContextBlock(
                    "tool_descriptions", C.PLANNER_GENERIC_TOOLS, priority=10, block_id="blk_demo_all_tools",
                    source_ref="tool_registry",
                ),
                oi.ContextBlock("task_state", C.PLANNER_TASK_STATE, priority=30, block_id="blk_demo_task_state"),
                oi.ContextBlock("environment", C.PLANNER_ENVIRONMENT, priority=20, block_id="blk_demo_environment"),
                oi.ContextBlock("examples", C.PLANNER_EXAMPLE, priority=20, block_id="blk_demo_example"),
                oi.ContextBlock("dynamic_run_data", C.PLANNER_RUN_DATA, priority=20, block_id="blk_demo_run_data"),
            ],
            total_budget_tokens=C.CONTEXT_TOTAL_BUDGET,
            response_reserve_tokens=C.CONTEXT_RESPONSE_RESERVE,
            selected_tools=C.PLANNER_STEP_TOOLS,
            tool_block_id=C.PLANNER_TOOL_BLOCK_ID,
            snapshot_id=C.CONTEXT_SNAPSHOT_ID,
        )  # fmt: skip
        with oi.provider_call(C.PLANNER_PROVIDER, C.PLANNER_MODEL, context_snapshot=snapshot) as call:
            call.record_input(
                [{"role": "user", "parts": [{"type": "text", "content": C.QUESTION}]}],
                system_instructions=[{"type": "text", "content": snapshot.render()}],
            )
            try:
                json.loads(C.PLANNER_BAD_OUTPUT)
            except json.JSONDecodeError as exc:
                oi.badcase(
                    "json_parse",
                    error=exc,
                    provider=C.PLANNER_PROVIDER,
                    model=C.PLANNER_MODEL,
                    raw_model_output=C.PLANNER_BAD_OUTPUT,
                    badcase_id=C.BADCASE_PLAN,
                )
                call.retry("invalid_json")
            subquestions = json.loads(C.PLANNER_OUTPUT)["subquestions"]
            usage_in, usage_out, cost = C.USAGE["plan"]
            call.set_usage(usage_in, usage_out)
            call.set_cost(cost)
            call.set_response(model="gpt-4o-2024-08-06", response_id="chatcmpl-demo-plan", finish_reasons=["stop"])
            call.record_output(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": C.PLANNER_OUTPUT}],
                        "finish_reason": "stop",
                    }
                ]
            )
    truncated = len(snapshot.compressions)
    echo(
        f"  plan        {len(subquestions)} subquestions; context snapshot {snapshot.used_tokens}/"
        f"{snapshot.available_tokens} tokens ({truncated} block truncated); first answer was malformed JSON "
        "(badcase, retry)"
    )


def search(echo: Echo) -> None:
    with oi.step("search", step_id=C.STEP_SEARCH):
        with oi.provider_call(
            C.SEARCH_PROVIDER, C.SEARCH_MODEL, operation="retrieval", data_source_id=C.SEARCH_DATA_SOURCE
        ) as call:
            call.retry("timeout")
            call.fallback(to_provider=C.SEARCH_FALLBACK_PROVIDER, reason="rate_limited")
            usage_in, _, cost = C.USAGE["search"]
            call.set_usage(usage_in)
            call.set_cost(cost)
            call.set_response(response_id=C.SEARCH_RESPONSE_ID)
        for src in C.SOURCES:
            with oi.tool_invocation("web_fetch", call_id=src.tool_call_id, provider="web") as fetch:
                fetch.record_arguments({"url": src.url})
                fetch.record_result({"status": 200, "title": src.title})
                oi.source(
                    src.url,
                    title=src.title,
                    provider=C.SEARCH_FALLBACK_PROVIDER,
                    retrieved_at=C.RETRIEVED_AT,
                    source_id=src.source_id,
                )
                oi.evidence_item(
                    src.source_id,
                    src.excerpt,
                    confidence=src.confidence,
                    supports_step="synthesize",
                    evidence_id=src.evidence_id,
                )
        oi.guard_result("budget.cost", passed=True, reason="under_budget", stage="budget")
    echo(
        f"  search      {C.SEARCH_PROVIDER} timed out (retry), then was rate limited: fell back to "
        f"{C.SEARCH_FALLBACK_PROVIDER}; {len(C.SOURCES)} sources, {len(C.SOURCES)} evidence items"
    )


def verify(echo: Echo) -> None:
    blocked = 0
    with oi.step("verify", step_id=C.STEP_VERIFY), oi.skill(*C.SKILL_VERIFIER[:2], invocation_id=C.SKILL_VERIFIER[2]):
        with oi.tool_invocation("citation_lookup", call_id=C.VERIFY_TOOL_CALL) as lookup:
            lookup.record_arguments({"claims": [C.draft_claim_id(c) for c in C.DRAFT_CLAIMS]})
        for draft in C.DRAFT_CLAIMS:
            claim_id = oi.claim(draft.text, confidence=draft.confidence, claim_id=C.draft_claim_id(draft))
            for i, evidence_id in enumerate(draft.evidence, 1):
                oi.citation(
                    claim_id,
                    evidence_id,
                    citation_text=f"[{evidence_id}]",
                    citation_id=f"cit_demo_draft_{draft.key}_{i}",
                )
            with oi.guard(C.GUARD_CITATION, stage="output", target_id=claim_id) as check:
                if draft.evidence:
                    check.passed("cited")
                else:
                    check.blocked("uncited_claim")
                    blocked += 1
        share = next(c for c in C.DRAFT_CLAIMS if c.key == "share")
        oi.conflict(
            C.CONFLICT_DESCRIPTION,
            claim_ids=[C.draft_claim_id(share)],
            evidence_ids=[C.EV["survey_a"], C.EV["survey_b"]],
            severity="high",
            conflict_id=C.CONFLICT_ID,
        )
    echo(
        f"  verify      guard {C.GUARD_CITATION} blocked {blocked} uncited claim; "
        "1 conflict between two sources (40% vs 25%)"
    )


def synthesize(echo: Echo) -> tuple[str, ...]:
    with (
        oi.step("synthesize", step_id=C.STEP_SYNTHESIZE),
        oi.skill(*C.SKILL_WRITER[:2], invocation_id=C.SKILL_WRITER[2]),
    ):
        report = oi.create_artifact(C.REPORT_TITLE, artifact_type="markdown_report", artifact_id=C.REPORT_ID)
        v1 = _write_version(report, 1, C.CLAIMS_V1, C.REPORT_V1)
        oi.verifier_result("citation_coverage", passed=False, score=0.5, reason="conflict_unresolved", target_id=v1)
        oi.decision_record(
            "publish_report",
            model_decision="publish",
            effective_decision="regenerate",
            model_action="publish_v1",
            effective_action="hedge_conflicting_claim",
            expected_action="hedge_conflicting_claim",
            policy_passed=False,
            reason="a cited figure has an open high-severity conflict",
            evidence_refs=[C.CONFLICT_ID, v1],
            decision_id=C.DECISION_ID,
        )
        oi.repair(  # how v1 became v2 (seed 001's repair history): the writer model hedged the disputed figure
            "hedge_conflicting_claim",
            applied=True,
            iteration=1,
            target=f"{C.REPORT_ID}.claims",
            reason="a cited figure has an open high-severity conflict",
            computed_by="model",
            computed_by_name=C.WRITER_MODEL,
            from_version_id=v1,
            to_version_id=C.REPORT_V2,
            repair_id=C.REPAIR_ID,
        )
        v2 = _write_version(report, 2, C.CLAIMS_V2, C.REPORT_V2)
        oi.verifier_result("citation_coverage", passed=True, score=1.0, reason="all_claims_cited", target_id=v2)
        oi.decision_record(  # the gate lets v2 through to an editor: a human closes it (runner.human_verdict)
            "publish_report",
            model_decision="publish",
            effective_decision="human_review",
            model_action="publish_v2",
            effective_action="publish_v2",
            policy_passed=True,
            reason="a figure from disagreeing sources needs an editor's sign-off",
            evidence_refs=[C.CONFLICT_ID, v2],
            iteration=2,
            decision_id=C.PUBLISH_V2_DECISION_ID,
        )
        bundle = oi.create_artifact("Evidence bundle", artifact_type="evidence_bundle", artifact_id=C.BUNDLE_ID)
        bundle.add_version(C.render_bundle(), evidence_ids=[s.evidence_id for s in C.SOURCES], version_id=C.BUNDLE_V1)
        oi.propose_memory(
            "procedural",
            "When sources disagree on a figure, report the range and cite every source.",
            scopes=[("project", C.PROJECT), ("flow", C.WORKFLOW), ("skill", C.SKILL_WRITER[0])],
            rationale="report v1 failed citation_coverage on a conflicting figure",
            summary="report ranges for conflicting figures",
            proposal_id=C.MEMORY_PROPOSAL_ID,
        )
    echo(
        "  synthesize  report v1 failed citation_coverage; the policy gate turned the model's 'publish' into "
        "'regenerate'; v2 passed and waits for an editor (human_review)"
    )
    return v1, v2


def _write_version(report: oi.Artifact, number: int, claims: tuple[C.Claim, ...], version_id: str) -> str:
    text = C.render_report(claims)
    with oi.provider_call(C.WRITER_PROVIDER, C.WRITER_MODEL) as call:
        usage_in, usage_out, cost = C.USAGE[f"report_v{number}"]
        if number == 2:  # through the LLM proxy, which records the same request from its side
            _through_proxy(usage_in, usage_out, cost)
        call.set_usage(usage_in, usage_out)
        call.set_cost(cost)
        call.set_response(response_id=f"msg_demo_report_v{number}", finish_reasons=["end_turn"])
        call.record_output([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
    evidence = tuple(dict.fromkeys(e for c in claims for e in c.evidence))
    vid = report.add_version(text, evidence_ids=evidence, version_id=version_id)
    for c in claims:
        claim_id = oi.claim(
            c.text, confidence=c.confidence, artifact_version_id=vid, claim_id=C.version_claim_id(number, c)
        )
        for i, evidence_id in enumerate(c.evidence, 1):
            oi.citation(
                claim_id,
                evidence_id,
                citation_text=f"[{evidence_id}]",
                status=c.citation_status,
                citation_id=C.citation_id(number, c, i),
            )
    return vid


def _through_proxy(usage_in: int, usage_out: int, cost: float) -> None:
    """The proxy's record of the writer's call (nested in it: counted once): a fallback off a throttled provider,
    then the streamed answer."""
    with oi.proxy_request(C.PROXY_CLIENT, C.PROXY_FIRST_PROVIDER, C.WRITER_MODEL, stream=True) as request:
        request.fallback(to_provider=C.WRITER_PROVIDER, reason=C.PROXY_FALLBACK_REASON, status="succeeded")
        request.stream_chunks(C.PROXY_STREAM_CHUNKS)
        request.set_usage(usage_in, usage_out)
        request.set_cost(cost)


def hand_off(subject: str, start_worker: StartWorker, echo: Echo) -> tuple[str, str, int, str]:
    """Delegate the fact-check to a worker process (and a translation nobody accepts); verify the outcome."""
    with oi.step("fact_check", step_id=C.STEP_HANDOFF):
        translate = oi.delegate(
            C.TRANSLATE_ARTIFACT,
            operation_id=C.TRANSLATE_OPERATION,
            handoff_id=C.TRANSLATE_HANDOFF_ID,
            target=C.TRANSLATE_TARGET,
        )
        fact = oi.delegate(
            C.FACT_CHECK_ARTIFACT,
            operation_id=C.FACT_CHECK_OPERATION,
            handoff_id=C.FACT_CHECK_HANDOFF_ID,
            target=C.FACT_CHECK_TARGET,
        )
        oi.flush()  # the delegated transitions are in the store before anyone could accept them
        worker = start_worker(fact.carrier, subject, C.FACT_CHECK_ARTIFACT)
        try:
            worker.expect("accepted")
            waiting = worker.expect("waiting")
            echo(f"  fact_check  worker pid {worker.pid} accepted {fact.handoff_id}; waiting: {waiting['waiting_for']}")
            oi.authorization(C.WAITING_FOR, authorized_by=C.APPROVER, reason="archived copy of an unreachable source",
                             authorization_id=C.AUTHORIZATION_ID)  # fmt: skip
            worker.send({"approval": "granted"})
            done = worker.expect("completed")
            code = worker.finish()
        except BaseException:
            worker.kill()
            raise
        ref = str(done.get("artifact_ref", ""))
        if code == 0 and ref and len(str(done.get("content_sha256", ""))) == 64:
            fact.verified("artifact_checked")
            outcome = "verified"
        else:
            fact.failed("artifact_missing")
            outcome = f"outcome_failed (worker exit code {code})"
        recovery = oi.recover(  # the translator is offline: re-delegate once, within limits, before anything else
            translate,
            authority=C.RECOVERY_AUTHORITY,
            max_attempts=1,
            time_limit_s=C.RECOVERY_TIME_LIMIT_S,
            success_evidence="outcome_verified",
            trigger="target_offline",
            action="redelegate",
            recovery_id=C.TRANSLATE_RECOVERY_ID,
        )
        retry = translate.retry(
            target=C.TRANSLATE_BACKUP_TARGET, reason="target_offline", handoff_id=C.TRANSLATE_RETRY_HANDOFF_ID
        )
        recovery.attempt(handoff_id=retry.handoff_id)
        oi.flush()
    echo(f"              {C.APPROVER} authorised the fallback; worker completed {ref} -> {outcome}")
    echo(
        f"              {C.TRANSLATE_TARGET} offline: recovery {C.TRANSLATE_RECOVERY_ID} ({C.RECOVERY_AUTHORITY}, 1 "
        f"attempt, {C.RECOVERY_TIME_LIMIT_S:g} s) re-delegated to {C.TRANSLATE_BACKUP_TARGET}: waiting for "
        "acknowledgement (orphaned once the acknowledgement window passes)"
    )
    return fact.handoff_id, translate.handoff_id, worker.pid, ref
