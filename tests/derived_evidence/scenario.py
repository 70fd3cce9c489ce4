"""A research run recorded with the otel_agent.instrument helpers into in-memory exporters: evidence from two
processes (two services, separate traces), claims with every support status, a regenerated artifact, a
conflict, OpenInference and GenAI retrieval spans, a context snapshot, memory proposals, a decision with a
mismatch, a badcase and a handoff with a retry. Returns the finished spans and the ids minted."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent.instrument as oi

REPORT_V1 = "# Agent memory systems\n\n- Graph orchestration is mainstream [1]\n"
REPORT_V2 = (
    "# Agent memory systems\n\n"
    "- Graph orchestration is mainstream [1]\n"
    "- LangGraph has the most mature developer experience\n"
    "- Memory isolation remains a challenge\n"
)


@dataclass
class Recorded:
    spans: list[ReadableSpan]
    ids: dict[str, Any] = field(default_factory=dict)


def _provider(service: str) -> tuple[TracerProvider, InMemorySpanExporter]:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def record_research() -> Recorded:
    main, main_spans = _provider("researcher")
    other, other_spans = _provider("crawler")
    ids: dict[str, Any] = {}

    # Evidence recorded by another process (its own trace and service), referred to by id only.
    with oi.use_tracer_provider(other), oi.flow_run("crawl", run_id="run_crawl"), oi.step("fetch"):
        ids["src_far"] = oi.source(
            "https://github.com/microsoft/autogen",
            title="AutoGen",
            provider="exa",
            source_id="src_far",
            retrieved_at="2026-08-20T10:00:00.000+00:00",
        )
        ids["ev_far"] = oi.evidence_item(
            "src_far", "AutoGen v0.4 introduces graph workflows", confidence="medium", evidence_id="ev_far"
        )

    with oi.use_tracer_provider(main), oi.flow_run("deep_research", run_id="run_main") as run:
        ids["run"] = run.run_id
        with oi.step("search"):
            snapshot = oi.assemble_context(
                [
                    oi.ContextBlock("instructions", "follow the plan " * 400, source_ref="flow.md"),
                    oi.ContextBlock("history", token_count=10, block_id="blk_history"),
                ],
                selected_tools={"web_fetch": "fetch a page", "web_extract": "extract text"},
                snapshot_id="ctx_1",
            )
            with oi.provider_call("openai", "gpt-4o", context_snapshot=snapshot) as call:
                call.set_usage(120, 40)
            ids["src_a"] = oi.source(
                "https://langchain.com/langgraph",
                title="LangGraph",
                provider="tavily",
                source_id="src_a",
                metadata={"author": "LangChain"},
            )
            ids["src_b"] = oi.source("https://example.org/b", title="B", provider="tavily", source_id="src_b")
            oi.evidence_item("src_a", "LangGraph adoption grew 300%", confidence="high", evidence_id="ev_a1")
            oi.evidence_item("src_a", "LangGraph is used by many teams", confidence="medium", evidence_id="ev_a2")
            oi.evidence_item("src_b", "Adoption figures disagree", confidence="low", evidence_id="ev_b1")
            # Retrieval results of other conventions: an OpenInference RETRIEVER span and a GenAI one.
            with main.get_tracer("openinference.instrumentation.langchain").start_as_current_span(
                "VectorStoreRetriever",
                attributes={
                    "openinference.span.kind": "RETRIEVER",
                    "input.value": "agent memory",
                    "retrieval.documents.0.document.id": "kb_7",
                    "retrieval.documents.0.document.content": "Memory isolation between agents is hard",
                    "retrieval.documents.0.document.score": 0.91,
                    "retrieval.documents.0.document.metadata": json.dumps(
                        {"url": "https://kb.example/memory", "title": "KB: memory"}
                    ),
                    "retrieval.documents.1.document.content": "Unrelated passage",
                    "retrieval.documents.1.document.score": 0.2,
                },
            ) as retriever:
                ctx = retriever.get_span_context()
                ids["oi_evidence"] = f"retrieval:{ctx.trace_id:032x}:{ctx.span_id:016x}:0"
                ids["oi_evidence_1"] = f"retrieval:{ctx.trace_id:032x}:{ctx.span_id:016x}:1"
            with main.get_tracer("genai").start_as_current_span(
                "retrieval",
                attributes={
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.data_source.id": "web_index",
                    "gen_ai.retrieval.documents": json.dumps(
                        [{"id": "doc_g1", "score": 0.8, "content": "Graph workflows are common"}]
                    ),
                },
            ) as genai:
                ctx = genai.get_span_context()
                ids["genai_evidence"] = f"retrieval:{ctx.trace_id:032x}:{ctx.span_id:016x}:0"
        with oi.step("synthesize"):
            report = oi.create_artifact("Agent memory systems", artifact_id="art_report")
            ids["v1"] = report.add_version(REPORT_V1, evidence_ids=["ev_a1"], version_id="artv_1")
            ids["v2"] = report.add_version(REPORT_V2, evidence_ids=["ev_a1", "ev_far"], version_id="artv_2")
            claim = oi.claim
            claim(
                "Graph orchestration is mainstream",
                confidence="high",
                artifact_version_id="artv_2",
                claim_id="cl_supported",
            )
            oi.citation("cl_supported", "ev_a1", citation_text="[1]", citation_id="cit_1")
            oi.citation("cl_supported", "ev_far", citation_text="[2]", citation_id="cit_2")
            oi.citation("cl_supported", ids["genai_evidence"], citation_id="cit_g")
            claim(
                "LangGraph has the most mature developer experience",
                confidence="medium",
                artifact_version_id="artv_2",
                claim_id="cl_weak",
            )
            oi.citation("cl_weak", "ev_a2", citation_text="[3]", status="weak", citation_id="cit_3")
            claim(
                "Memory isolation remains a challenge",
                confidence="medium",
                artifact_version_id="artv_2",
                claim_id="cl_conflicted",
            )
            oi.citation("cl_conflicted", "ev_b1", citation_id="cit_4")
            oi.citation("cl_conflicted", ids["oi_evidence"], citation_id="cit_oi")
            claim("Nobody cites this", confidence="low", claim_id="cl_uncited")
            claim("Cites what was never recorded", confidence="low", claim_id="cl_dangling")
            oi.citation("cl_dangling", "ev_missing", citation_id="cit_5")
            oi.conflict(
                "Sources disagree on adoption", evidence_ids=["ev_b1"], severity="high", conflict_id="conflict_1"
            )
            oi.decision_record(
                "quality_review",
                model_decision="accept",
                effective_decision="human_review",
                reason="uncited claim",
                iteration=1,
                decision_id="dec_1",
                evidence_refs=["ev_a1"],
            )
            oi.decision_record("publish", model_decision="publish", effective_decision="publish", decision_id="dec_2")
            oi.badcase(
                "json_parse",
                error=ValueError("bad json"),
                provider="openai",
                model="gpt-4o",
                iteration=1,
                badcase_id="bad_1",
            )
            oi.propose_memory(
                "procedural",
                "Use two search providers when coverage is low",
                scopes=[("project", "proj_research"), ("flow", "deep_research")],
                rationale="coverage was insufficient",
                proposal_id="memp_1",
            )
            oi.propose_memory(
                "episodic",
                "run_main found 3 sources; one conflict",
                scopes=[("run", "run_main"), ("flow", "deep_research")],
                rationale="run summary",
                proposal_id="memp_2",
            )
            oi.propose_memory(
                "semantic",
                "LangGraph is graph based",
                scopes=[("project", "other")],
                rationale="fact",
                proposal_id="memp_3",
            )
        with oi.step("handoff"):
            first = oi.delegate("fact_check_report", operation_id="op_fc", target="fact_checker")
            ids["hof_first"] = first.handoff_id
            retry = first.retry(reason="no_ack")
            ids["hof_retry"] = retry.handoff_id
    with oi.use_tracer_provider(other), oi.accept(retry.carrier, expected_artifact="fact_check_report") as work:
        work.progress("sources_checked")
        work.completed("artv_checked")
    with oi.use_tracer_provider(main):
        retry.verified("checks_passed")
    main.shutdown()
    other.shutdown()
    return Recorded(list(main_spans.get_finished_spans()) + list(other_spans.get_finished_spans()), ids)
