"""Third-party GenAI traces for the benchmarks: what an application sends when an OpenTelemetry GenAI
instrumentation that is not ours traces it (OTel GenAI semantic conventions, no ``otel_agent.*`` attribute).

Every trace is one agent invocation, so one run (docs/views-runs.md, "which run": a trace without
``otel_agent.run.id`` is a run named by its trace id), of 6-10 spans (8 on average): an ``invoke_agent X`` root,
3-5 ``chat MODEL`` calls (provider, request and response model, input/output tokens, cache reads on 40 %) and one
``execute_tool T`` between two calls. About 3 % of calls and 5 % of tools fail (status error, ``error.type``);
half the traces with a failed child fail at the root too.
"""

from __future__ import annotations

import random

from agent_spans import kv
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

AGENTS = ["support_agent", "triage_agent", "coding_agent", "billing_agent"]
MODELS = [
    ("openai", "gpt-4o", "gpt-4o-2024-08-06"),
    ("openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
    ("anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514"),
    ("gcp.gemini", "gemini-2.5-flash", "gemini-2.5-flash"),
    ("aws.bedrock", "meta.llama3-70b-instruct-v1:0", "meta.llama3-70b-instruct-v1:0"),
]
TOOLS = ["search_kb", "get_order", "run_tests", "send_email", "lookup_invoice"]
SERVICES = ["helpdesk", "coding-assistant", "billing-bot"]
CHAT_ERRORS = ["RateLimitError", "APITimeoutError", "500"]


def add_trace(ss, rnd: random.Random, start_ns: int) -> int:
    """One agent trace appended to the ScopeSpans ``ss``, starting at ``start_ns``; returns its end time."""
    trace_id, root_id = rnd.randbytes(16), rnd.randbytes(8)
    agent = AGENTS[rnd.randrange(len(AGENTS))]
    provider, model, dated = MODELS[rnd.randrange(len(MODELS))]
    calls = rnd.choice((3, 4, 4, 5))
    t = start_ns + 2_000_000
    failed: str | None = None

    def child(name: str, kind: int, attrs: dict, dur: int, error: str | None) -> None:
        s = ss.spans.add()
        s.trace_id, s.span_id, s.parent_span_id = trace_id, rnd.randbytes(8), root_id
        s.name, s.kind = name, kind
        s.start_time_unix_nano, s.end_time_unix_nano = t, t + dur
        if error:
            attrs["error.type"] = error
            s.status.code = 2
        s.attributes.extend([kv(k, v) for k, v in attrs.items()])

    for c in range(calls):
        dur = rnd.randint(300_000_000, 6_000_000_000)
        attrs: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.response.model": dated,
            "gen_ai.response.id": f"resp_{rnd.getrandbits(64):016x}",
            "gen_ai.response.finish_reasons": ["tool_calls" if c < calls - 1 else "stop"],
            "gen_ai.request.max_tokens": 4096,
            "gen_ai.usage.input_tokens": rnd.randint(300, 12_000),
            "gen_ai.usage.output_tokens": rnd.randint(20, 1_500),
            "server.address": "api.example.com",
        }
        if rnd.random() < 0.4:
            attrs["gen_ai.usage.cache_read.input_tokens"] = rnd.randint(100, 4_000)
        error = CHAT_ERRORS[rnd.randrange(len(CHAT_ERRORS))] if rnd.random() < 0.03 else None
        failed = failed or error
        child(f"chat {model}", 3, attrs, dur, error)
        t += dur + 1_000_000
        if c < calls - 1:
            tool = TOOLS[rnd.randrange(len(TOOLS))]
            dur = rnd.randint(5_000_000, 2_000_000_000)
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": f"call_{rnd.getrandbits(64):016x}",
                "gen_ai.tool.type": "function",
            }
            error = "ToolError" if rnd.random() < 0.05 else None
            failed = failed or error
            child(f"execute_tool {tool}", 1, attrs, dur, error)
            t += dur + 1_000_000
    root = ss.spans.add()
    root.trace_id, root.span_id = trace_id, root_id
    root.name, root.kind = f"invoke_agent {agent}", 1
    root.start_time_unix_nano, root.end_time_unix_nano = start_ns, t + 1_000_000
    attrs = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.agent.id": f"asst_{AGENTS.index(agent)}",
        "gen_ai.conversation.id": f"conv_{rnd.getrandbits(64):016x}",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }
    if failed and rnd.random() < 0.5:
        attrs["error.type"] = failed
        root.status.code = 2
    root.attributes.extend([kv(k, v) for k, v in attrs.items()])
    return t + 1_000_000


def make_request(rnd: random.Random, n_traces: int, start_ns: int, gap_ns: int, service: str) -> bytes:
    """One ExportTraceServiceRequest of ``n_traces`` agent traces of ``service``, one starting every ``gap_ns``."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(
        [kv("service.name", service), kv("telemetry.sdk.name", "opentelemetry"), kv("telemetry.sdk.language", "python")]
    )
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "opentelemetry.instrumentation.openai_v2", "2.1b0"
    for i in range(n_traces):
        add_trace(ss, rnd, start_ns + i * gap_ns)
    return req.SerializeToString()
