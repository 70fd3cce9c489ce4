"""Realistic, pre-encodable agent spans for the benchmarks: a mix of workflow/step/chat/tool spans with
about 12 attributes (gen_ai.* ints, doubles, strings), one event per 3 spans, a link on 1 in 20."""

from __future__ import annotations

import json
import os
import random

# The SDK's own OTLP encoder of an attribute (what an SDK exporter sends), rather than a hand-written copy.
from opentelemetry.exporter.otlp.proto.common._internal import _encode_key_value as kv
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

MODELS = [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4"), ("openai", "gpt-4o-mini")]
TOOLS = ["web_search", "fetch_url", "python", "read_file"]


def _attributes(i: int, rnd: random.Random, run_id: str) -> list[KeyValue]:
    kind = i % 4
    common = [
        kv("otel_agent.run.id", run_id),
        kv("otel_agent.step.name", ["plan", "search", "verify", "write"][i % 4]),
    ]
    if kind in (0, 1):
        provider, model = MODELS[i % 3]
        return [
            *common,
            kv("gen_ai.operation.name", "chat"),
            kv("gen_ai.provider.name", provider),
            kv("gen_ai.request.model", model),
            kv("gen_ai.response.model", model + "-2025-08-06"),
            kv("gen_ai.usage.input_tokens", rnd.randint(200, 8000)),
            kv("gen_ai.usage.output_tokens", rnd.randint(20, 1200)),
            kv("gen_ai.usage.cache_read.input_tokens", rnd.randint(0, 2000)),
            kv("gen_ai.request.temperature", 0.2),
            kv("gen_ai.response.finish_reasons", "stop"),
            kv("otel_agent.cost.usd", round(rnd.random() / 50, 6)),
        ]
    if kind == 2:
        tool = TOOLS[i % len(TOOLS)]
        return [
            *common,
            kv("gen_ai.operation.name", "execute_tool"),
            kv("gen_ai.tool.name", tool),
            kv("gen_ai.tool.call.id", f"call_{rnd.getrandbits(48):x}"),
            kv("gen_ai.tool.type", "function"),
            kv("otel_agent.tool.result_bytes", rnd.randint(100, 90000)),
            kv("otel_agent.retry.count", rnd.randint(0, 2)),
            kv("otel_agent.tool.cached", rnd.random() < 0.3),
            kv("otel_agent.tool.latency_budget_ms", 2500.0),
            kv("server.address", "api.search.example"),
            kv("error.type", "") if rnd.random() < 0.9 else kv("error.type", "timeout"),
        ]
    return [
        *common,
        kv("gen_ai.operation.name", "invoke_agent"),
        kv("gen_ai.agent.name", "researcher"),
        kv("gen_ai.agent.id", "agent_7"),
        kv("gen_ai.conversation.id", f"conv_{i // 40}"),
        kv("otel_agent.step.index", i % 12),
        kv("otel_agent.budget.max_cost_usd", 2.5),
        kv("otel_agent.budget.max_model_calls", 40),
        kv("otel_agent.guard.passed", True),
        kv("otel_agent.skill.ref", "research-planner@1.0.0"),
        kv("otel_agent.flow.name", "deep_research"),
    ]


def _lineage_attributes(i: int, seed: int, run_id: str) -> tuple[str, list[KeyValue]]:
    """(span name, attributes) of an evidence record of our instrumentation, kinds in turn, ids per request."""
    kind = ("source", "evidence_item", "claim", "citation")[i // 10 % 4]
    ids = {k: f"{k}_{seed}_{i // 40}" for k in ("source", "evidence", "claim", "citation")}
    common = [kv("otel_agent.run.id", run_id), kv("otel_agent.record.kind", kind)]
    fields = {
        "source": {"source.id": ids["source"], "source.url": "https://example.org/a"},
        "evidence_item": {
            "evidence.id": ids["evidence"],
            "evidence.source_id": ids["source"],
            "evidence.excerpt": "An excerpt of the source, a sentence or two long.",
        },
        "claim": {"claim.id": ids["claim"], "claim.text": "A claim of the report."},
        "citation": {
            "citation.id": ids["citation"],
            "citation.claim_id": ids["claim"],
            "citation.evidence_id": ids["evidence"],
            "citation.status": "valid",
        },
    }[kind]
    return "otel_agent." + kind, common + [kv("otel_agent." + k, v) for k, v in fields.items()]


def _retrieval_attributes(i: int, seed: int) -> list[KeyValue]:
    """A GenAI retrieval span's attributes: three documents, as a JSON string."""
    docs = [{"id": f"kb_{(seed + i + d) % 997}", "score": 0.9 - d / 10, "content": "A retrieved passage " * 8}
            for d in range(3)]  # fmt: skip
    return [kv("gen_ai.operation.name", "retrieval"), kv("gen_ai.data_source.id", "kb"),
            kv("gen_ai.retrieval.documents", json.dumps(docs))]  # fmt: skip


def make_request(n_spans: int, start_ns: int, seed: int, spacing_ns: int = 20_000, lineage: bool = False) -> bytes:
    """One ExportTraceServiceRequest of ``n_spans`` spans, all ids fresh, start times from ``start_ns``. With
    ``lineage``, one span in ten is an evidence record of ours (source, evidence item, claim, citation in turn)
    and one in fifty a GenAI retrieval span with three documents: what the lineage lookup tables are written
    for."""
    rnd = random.Random(seed)
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(
        [
            kv("service.name", "research-agent"),
            kv("service.version", "1.4.2"),
            kv("deployment.environment", "prod"),
        ]
    )
    ss = rs.scope_spans.add()
    ss.scope.name = "otel_agent"
    ss.scope.version = "0.1.0"
    trace_id = os.urandom(16)
    parent = os.urandom(8)
    for i in range(n_spans):
        if i % 25 == 0:
            trace_id, parent = os.urandom(16), os.urandom(8)
        s = ss.spans.add()
        s.trace_id = trace_id
        s.span_id = os.urandom(8)
        s.parent_span_id = parent
        s.name = (
            "chat gpt-4o" if i % 4 < 2 else ("execute_tool web_search" if i % 4 == 2 else "invoke_agent researcher")
        )
        s.kind = 3 if i % 4 < 2 else 1
        st = start_ns + i * spacing_ns
        s.start_time_unix_nano = st
        s.end_time_unix_nano = st + rnd.randint(1_000_000, 900_000_000)
        if lineage and i % 10 == 5:
            s.name, attributes = _lineage_attributes(i, seed, f"run_{seed}_{i // 100}")
            s.end_time_unix_nano = st
            s.attributes.extend(attributes)
        elif lineage and i % 50 == 7:
            s.name = "retrieval kb"
            s.attributes.extend(_retrieval_attributes(i, seed))
        else:
            s.attributes.extend(_attributes(i, rnd, f"run_{seed}_{i // 100}"))
        if i % 3 == 0:
            e = s.events.add()
            e.time_unix_nano = st + 500
            e.name = "gen_ai.fallback"
            e.attributes.extend(
                [
                    kv("otel_agent.fallback.from", "openai/gpt-4o"),
                    kv("otel_agent.fallback.to", "anthropic/claude"),
                ]
            )
        if i % 20 == 0:
            link = s.links.add()
            link.trace_id = os.urandom(16)
            link.span_id = os.urandom(8)
            link.attributes.extend([kv("otel_agent.link.kind", "handoff")])
        s.status.code = 2 if rnd.random() < 0.03 else 1
    return req.SerializeToString()
