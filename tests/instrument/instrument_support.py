"""Shared test support: span lookups and one scenario that drives every helper (used by several tests)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent.instrument import attributes as A


def _pending(span: ReadableSpan) -> bool:
    return (span.attributes or {}).get(A.PENDING_SPAN_TYPE) == A.PENDING_SPAN


class Spans:
    """Finished spans of one test, with lookups by record kind and name."""

    def __init__(self, exporter: InMemorySpanExporter, provider: TracerProvider) -> None:
        self.exporter = exporter
        self.provider = provider

    @property
    def all(self) -> tuple[ReadableSpan, ...]:
        """The finished spans but the announcements of runs and steps that started (pending spans: ``pending``)."""
        return tuple(s for s in self.exporter.get_finished_spans() if not _pending(s))

    @property
    def pending(self) -> tuple[ReadableSpan, ...]:
        """The pending spans announcing that a run or step started (otel_agent/instrument/_scope.py _announce)."""
        return tuple(s for s in self.exporter.get_finished_spans() if _pending(s))

    def kind(self, record_kind: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.attributes.get(A.RECORD_KIND) == record_kind]

    def one(self, record_kind: str) -> ReadableSpan:
        found = self.kind(record_kind)
        assert len(found) == 1, f"expected one {record_kind} span, got {[s.name for s in found]}"
        return found[0]

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.name == name]

    def clear(self) -> None:
        self.exporter.clear()


@contextmanager
def lenient() -> Iterator[None]:
    """The helpers' default mode inside the block (the suite runs strict: tests/conftest.py)."""
    saved = os.environ.get("OTEL_AGENT_STRICT")
    os.environ["OTEL_AGENT_STRICT"] = "0"
    try:
        yield
    finally:
        if saved is None:
            del os.environ["OTEL_AGENT_STRICT"]
        else:
            os.environ["OTEL_AGENT_STRICT"] = saved


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    return span.context.span_id


def exercise_everything() -> dict[str, object]:
    """Drive every helper and every optional attribute once (content capture on). Returns the ids minted."""
    import otel_agent.instrument as oi

    ids: dict[str, object] = {}
    with oi.flow_run(
        "deep_research",
        run_id="run_demo",
        max_model_calls=1,
        max_tool_calls=5,
        max_cost_usd=0.01,
        agent_name="researcher",
        agent_id="agent_1",
        conversation_id="conv_1",
        capture_content=True,
        target="unity",
    ) as run:
        ids["run"] = run.run_id
        with oi.step("search", iteration=1, input_ref="artifact:requirement") as st:
            ids["step"] = st.step_id
            st.set_output_ref("sha256:0f1e2d")
            with oi.skill("research-planner", "1.0.0"):
                snapshot = oi.assemble_context(
                    [
                        oi.ContextBlock("instructions", "follow the plan " * 400, source_ref="flow.md"),
                        oi.ContextBlock("tool_descriptions", "web_search: search the web"),
                        oi.ContextBlock("history", token_count=10),
                    ],
                    selected_tools={"web_fetch": "fetch a page"},
                )
                with oi.provider_call(
                    "tavily",
                    "search",
                    context_snapshot=snapshot,
                    prompt_name="search_planner",
                    prompt_version="2",
                    agent_name="researcher",
                    input_artifacts=["requirement.json"],
                    iteration=1,
                ) as call:
                    call.set_output_artifacts(["search_plan.json"])
                    call.retry("timeout")
                    call.fallback(to_provider="exa", reason="rate_limited")
                    call.set_usage(
                        120,
                        48,
                        cache_read_input_tokens=64,
                        cache_creation_input_tokens=32,
                        reasoning_output_tokens=16,
                    )
                    call.set_response(model="search-2024", response_id="resp_1", finish_reasons=["stop"])
                    call.set_cost(0.02)
                    call.record_input([{"role": "user", "content": "q"}], system_instructions="be brief")
                    call.record_output([{"role": "assistant", "content": "a"}])
                with oi.proxy_request("claude_code", "anthropic", "claude-sonnet-4", stream=True) as proxied:
                    proxied.fallback(to_provider="openai", to_model="gpt-4o", reason="overloaded", status="failed")
                    proxied.stream_chunks(3)
                with oi.provider_call("exa", "index", operation="retrieval", data_source_id="web_index") as c2:
                    c2.set_token_estimate(900)
                with oi.tool_invocation(
                    "web_search",
                    call_id="call_1",
                    provider="tavily",
                    input_artifacts=["search_plan.json"],
                    output_artifacts=["hits.json"],
                    iteration=1,
                ) as tool:
                    tool.retry()
                    tool.set_cost(0.001)
                    tool.record_arguments({"query": "agents"})
                    tool.record_result({"hits": 3})
                try:
                    with oi.tool_invocation("broken"):
                        raise TimeoutError("slow")
                except TimeoutError:
                    pass
            src = oi.source(
                "https://example.org/a",
                title="A",
                provider="tavily",
                metadata={"author": "x"},
                source_id="src_a",
            )
            bound = oi.ActionBinding(run_id="run_demo", config_hash="sha256:c0ffee", variant="candidate")
            ev = oi.evidence_item(src, "excerpt", confidence="high", metadata={"page": 3}, action=bound)
            art = oi.create_artifact("report")
            v1 = art.add_version("# v1", evidence_ids=[ev])
            v2 = art.add_version("# v2", evidence_ids=[ev], iteration=2)
            cl = oi.claim("a claim", confidence="medium", artifact_version_id=v1, action=bound)
            cit = oi.citation(cl, ev, citation_text="[1]", status="weak")
            conf = oi.conflict("disagree", claim_ids=[cl], evidence_ids=[ev], severity="high")
            oi.guard_result("output.citation_required", passed=False, reason="uncited", stage="output", target_id=cl)
            oi.verifier_result("coverage", passed=False, score=0.4, reason="insufficient", target_id=v2, action=bound)
            dec = oi.decision_record(
                "quality_review",
                model_decision="repair",
                model_action="REDUCE_SPEED",
                effective_decision="human_review",
                effective_action="REDUCE_BULLETS",
                expected_action="REDUCE_BULLETS",
                policy_passed=False,
                reason="conflict",
                evidence_refs=["comparison_report.json"],
                iteration=1,
            )
            bad = oi.badcase(
                "json_parse",
                error=ValueError("bad json"),
                provider="openai",
                model="gpt-4o",
                raw_model_output="{",
                iteration=1,
            )
            rep = oi.repair(
                "REDUCE_BULLETS",
                applied=True,
                iteration=1,
                target="bullets_per_wave",
                before=30,
                after=22,
                reason="too many bullets",
                computed_by="deterministic",
                computed_by_name="repair_tool",
                from_version_id=v1,
                to_version_id=v2,
            )
            oi.badcase("schema", error_type="SchemaError", raw_model_output="x" * (70 * 1024))  # cut, marked
            mem = oi.propose_memory(
                "procedural",
                "use two providers",
                scopes=[("flow", "deep_research")],
                rationale="coverage",
                summary="two providers",
            )
            delegation = oi.delegate("fact_check_report", target="checker", reason="needs_check")
            auth = oi.authorization("unity_runs:3", authorized_by="alice", reason="reviewed")
            rec = oi.recover(delegation, authority="policy:auto_redelegate", max_attempts=2, max_cost_usd=0.05,
                             time_limit_s=600, success_evidence="outcome_verified", action="redelegate",
                             trigger="orphaned")  # fmt: skip
            rec.attempt(handoff_id="hof_retry_1", cost_usd=0.01, reason="redelegated")
            rec.succeeded("artv_checked", reason="verified")
            oi.recover("op_other", authority="human:bob", max_attempts=1, time_limit_s=60, mode="manual",
                       success_evidence="outcome_verified").failed("gave_up")  # fmt: skip
            with lenient():  # a misuse, recorded on its span (otel_agent.misuse) instead of raised
                ids["misused_claim"] = oi.claim("a claim", confidence="sure")
        ids.update(
            source=src, evidence=ev, artifact=art.artifact_id, versions=[v1, v2], claim=cl, citation=cit,
            conflict=conf, decision=dec, badcase=bad, repair=rep, authorization=auth, recovery=rec.recovery_id,
            memory=mem, carrier=dict(delegation.carrier),
            operation=delegation.operation_id, handoff=delegation.handoff_id,
        )  # fmt: skip
    with oi.accept(delegation.carrier, expected_artifact="fact_check_report") as work:
        work.progress("started")
        work.waiting("approval:fallback_source", reason="source_unreachable")
        work.completed("artv_checked")
    work.verified("checked")
    oi.receipt_from_carrier(delegation.carrier).failed("artifact_missing")
    return ids
