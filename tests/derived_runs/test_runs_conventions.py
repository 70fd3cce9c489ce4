"""The fidelity rules (issue 14) and the 2026 GenAI conventions on spans and log records built with the real OTel
SDK, in the shapes published instrumentations emit them (no library emits some of them yet): two run-level spans,
nested retrievers/tools, wrapper provider names, provider/model prefixes, reasoning prices, agent names in span
names, plan / apply_guardrail / memory / skill / fetch_response operations, streaming and prompt attributes,
gen_ai.evaluation.result and gen_ai.client.inference.operation.details log records, conversations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry._logs import LogRecord
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from tests.derived_runs.runs_support import query, write_logs, write_store


class Recorder:
    """An SDK tracer and logger recording into memory."""

    def __init__(self) -> None:
        self.spans_out = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.spans_out))
        self.tracer = self.provider.get_tracer("hand-built")
        self.logs_out = InMemoryLogRecordExporter()
        self.log_provider = LoggerProvider()
        self.log_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs_out))
        self.logger = self.log_provider.get_logger("hand-built")

    def span(self, name: str, **attributes: Any) -> Any:
        return self.tracer.start_as_current_span(name, attributes=attributes)

    def event(self, event_name: str, attributes: dict[str, Any], body: Any = None) -> None:
        """A GenAI event: an OTLP log record with an event name, in the current span's context."""
        self.logger.emit(LogRecord(event_name=event_name, attributes=attributes, body=body))

    def store(self, path: Path) -> Path:
        self.provider.shutdown()
        self.log_provider.shutdown()
        spans: list[ReadableSpan] = list(self.spans_out.get_finished_spans())
        write_store(path, spans)
        logs = list(self.logs_out.get_finished_logs())
        if logs:
            write_logs(path, logs)
        return path


@pytest.fixture
def rec() -> Iterator[Recorder]:
    return Recorder()


def chat(rec: Recorder, model: str, provider: str | None, tokens: tuple[int, int], **extra: Any) -> Any:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": tokens[0],
        "gen_ai.usage.output_tokens": tokens[1],
        **extra,
    }
    if provider is not None:
        attributes["gen_ai.provider.name"] = provider
    return rec.span(f"chat {model}", **attributes)


def test_two_run_level_spans_and_agent_names(rec: Recorder, tmp_path: Path) -> None:
    """A GenAI invoke_agent root above a traceloop workflow span holding the workflow name and error.type: the
    run's name and error come from the span that carries them; the agent name from the span name."""
    with rec.span("invoke_agent planner", **{"gen_ai.operation.name": "invoke_agent"}) as root:
        with rec.span(
            "research.workflow",
            **{"traceloop.span.kind": "workflow", "traceloop.workflow.name": "research", "error.type": "timeout"},
        ) as wf:
            wf.set_status(Status(StatusCode.ERROR))
        root.set_status(Status(StatusCode.ERROR, "timeout"))
    path = rec.store(tmp_path / "two.duckdb")
    run = query(path, "SELECT workflow_name, agent_name, status, error_type, errors, spans_in_error FROM runs")
    assert [tuple(r.values()) for r in run] == [("research", "planner", "error", "timeout", 1, 2)]


def test_error_type_from_status_message(rec: Recorder, tmp_path: Path) -> None:
    with rec.span("call", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as s:
        s.set_status(Status(StatusCode.ERROR, "RateLimitError: slow down"))
    with rec.span("other", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as s:
        s.set_status(Status(StatusCode.ERROR, "upstream said no"))
    with rec.span("bare", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as s:
        s.set_status(Status(StatusCode.ERROR))
    path = rec.store(tmp_path / "status.duckdb")
    rows = query(path, "SELECT error_type FROM provider_calls ORDER BY start_time")
    assert [r["error_type"] for r in rows] == ["RateLimitError", "upstream said no", "_OTHER"]


def test_nested_duplicates_in_every_category(rec: Recorder, tmp_path: Path) -> None:
    """A retriever wrapping an inner retriever (documents on the outer one), a tool wrapping a tool, an
    embedding wrapping an embedding: each counted once; the documents belong to the trace's run."""
    docs = {
        "retrieval.documents.0.document.id": "d1",
        "retrieval.documents.0.document.content": "Paris is sunny",
        "retrieval.documents.1.document.id": "d2",
        "retrieval.documents.1.document.content": "Rome is warm",
    }
    # OpenInference documents are read from OpenInference instrumentation scopes
    rec.tracer = rec.provider.get_tracer("openinference.instrumentation.llama_index")
    with rec.span("agent", **{"openinference.span.kind": "AGENT", "agent.name": "rag"}):
        with (
            rec.span("VectorIndexRetriever", **{"openinference.span.kind": "RETRIEVER", **docs}),
            rec.span("inner_retrieve", **{"openinference.span.kind": "RETRIEVER"}),
            rec.span(
                "embed",
                **{
                    "openinference.span.kind": "EMBEDDING",
                    "llm.model_name": "text-embedding-3-small",
                    "llm.token_count.prompt": 10,
                },
            ),
            rec.span("embed_inner", **{"openinference.span.kind": "EMBEDDING"}),
        ):
            pass
        with (
            rec.span("search_tool", **{"openinference.span.kind": "TOOL", "tool.name": "search"}),
            rec.span("search_tool_impl", **{"openinference.span.kind": "TOOL", "tool.name": "search"}),
        ):
            pass
    path = rec.store(tmp_path / "nested.duckdb")
    run = query(path, "SELECT run_id, agent_name, retrievals, tool_invocations, provider_calls, input_tokens FROM runs")
    assert [tuple(r.values())[1:] for r in run] == [("rag", 1, 1, 1, 10)]
    nested = query(path, "SELECT span_name FROM classified_spans WHERE nested_call ORDER BY 1")
    assert [r["span_name"] for r in nested] == ["embed_inner", "inner_retrieve", "search_tool_impl"]
    # third-party runs own their records: the documents join the run by run_id
    joined = query(path, "SELECT d.document_id FROM runs r JOIN retrieval_documents d USING (run_id) ORDER BY 1")
    assert [r["document_id"] for r in joined] == ["d1", "d2"]
    assert run[0]["run_id"] == query(path, "SELECT trace_id FROM runs")[0]["trace_id"]


@pytest.mark.parametrize(
    ("provider", "model", "pattern"),
    [
        ("langchain", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("function", "gpt-4o-mini", "gpt-4o-mini"),
        ("my-proxy", "openai/gpt-4o", "gpt-4o"),
        (None, "anthropic/claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("openai", "gpt-4o-2024-08-06", "gpt-4o"),
    ],
)
def test_price_lookup_for_unknown_providers(
    rec: Recorder, tmp_path: Path, provider: str | None, model: str, pattern: str
) -> None:
    with chat(rec, model, provider, (1000, 100)):
        pass
    path = rec.store(tmp_path / "price.duckdb")
    call = query(path, "SELECT price_model_pattern, cost_source, cost_missing_reason FROM provider_calls")
    assert [tuple(c.values()) for c in call] == [(pattern, "price_table", None)]


def test_known_provider_does_not_match_another_vendors_model(rec: Recorder, tmp_path: Path) -> None:
    """A provider the table knows stays strict: google's call of an OpenAI model name is not priced."""
    with chat(rec, "gpt-4o", "gcp.gemini", (1000, 100)):
        pass
    path = rec.store(tmp_path / "strict.duckdb")
    assert query(path, "SELECT cost_missing_reason FROM provider_calls")[0]["cost_missing_reason"] == "no_price"


def test_cache_and_reasoning_tokens_priced_at_their_rates(
    rec: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok,cache_read_usd_per_mtok,"
        "cache_write_usd_per_mtok,reasoning_usd_per_mtok\n"
        "acme,thinker-1,1.0,10.0,0.1,2.0,20.0\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("OTEL_AGENT_PRICES", str(prices))
    with chat(
        rec,
        "thinker-1",
        "acme",
        (1000, 300),
        **{
            "gen_ai.usage.cache_read.input_tokens": 400,
            "gen_ai.usage.cache_creation.input_tokens": 100,
            "gen_ai.usage.reasoning.output_tokens": 200,
        },
    ):
        pass
    path = rec.store(tmp_path / "rates.duckdb")
    cost = query(path, "SELECT cost_usd FROM provider_calls")[0]["cost_usd"]
    assert cost == pytest.approx((500 * 1.0 + 400 * 0.1 + 100 * 2.0 + 100 * 10.0 + 200 * 20.0) / 1e6)
    run = query(path, "SELECT cache_read_tokens, cache_creation_tokens, reasoning_tokens FROM runs")[0]
    assert tuple(run.values()) == (400, 100, 200)


def test_2026_operations(rec: Recorder, tmp_path: Path) -> None:
    with rec.span(
        "invoke_workflow trip",
        **{
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": "trip",
            "gen_ai.conversation.id": "conv-1",
        },
    ):
        with rec.span("plan", **{"gen_ai.operation.name": "plan", "gen_ai.agent.name": "planner"}):
            pass
        with rec.span(
            "apply_guardrail pii",
            **{
                "gen_ai.operation.name": "apply_guardrail",
                "gen_ai.guardrail.name": "pii",
                "gen_ai.guardrail.verdict.type": "deny",
                "gen_ai.guardrail.verdict.reason": "email found",
                "gen_ai.guardrail.target.type": "llm_input",
                "gen_ai.guardrail.action.type": "block",
            },
        ):
            pass
        with rec.span(
            "search_memory prefs",
            **{
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": "prefs",
                "gen_ai.memory.record.count": 3,
            },
        ):
            pass
        with rec.span(
            "upsert_memory prefs",
            **{
                "gen_ai.operation.name": "upsert_memory",
                "gen_ai.memory.store.id": "prefs",
                "gen_ai.memory.record.id": "r9",
            },
        ):
            pass
        with rec.span(
            "load_skill pdf",
            **{
                "gen_ai.operation.name": "load_skill",
                "gen_ai.tool.name": "load_skill",
                "gen_ai.skill.name": "pdf",
                "gen_ai.skill.version": "2",
            },
        ):
            pass
        with rec.span(
            "read_skill_resource pdf", **{"gen_ai.operation.name": "read_skill_resource", "gen_ai.skill.name": "pdf"}
        ):
            pass
        with rec.span("fetch_response", **{"gen_ai.operation.name": "fetch_response", "gen_ai.response.id": "resp_1"}):
            pass
        with chat(
            rec,
            "gpt-4o",
            "openai",
            (100, 10),
            **{
                "gen_ai.request.stream": True,
                "gen_ai.response.time_to_first_chunk": 0.25,
                "gen_ai.prompt.name": "triage",
                "gen_ai.prompt.version": "3",
                "gen_ai.response.id": "resp_1",
            },
        ):
            pass
    path = rec.store(tmp_path / "ops.duckdb")
    cats = query(path, "SELECT span_name, category, operation FROM classified_spans ORDER BY start_time")
    assert [tuple(c.values()) for c in cats] == [
        ("invoke_workflow trip", "flow_run", "invoke_workflow"),
        ("plan", "step", "plan"),
        ("apply_guardrail pii", "guard_result", "apply_guardrail"),
        ("search_memory prefs", "memory", "search_memory"),
        ("upsert_memory prefs", "memory", "upsert_memory"),
        ("load_skill pdf", "tool_invocation", "load_skill"),
        ("read_skill_resource pdf", "tool_invocation", "read_skill_resource"),
        ("fetch_response", "other", "fetch_response"),
        ("chat gpt-4o", "provider_call", "chat"),
    ]
    run = query(
        path,
        "SELECT workflow_name, session_id, steps, guard_checks, guard_blocks, memory_operations, "
        "tool_invocations, provider_calls, provider_ttfc_p50_ms FROM runs",
    )
    assert [tuple(r.values()) for r in run] == [("trip", "conv-1", 1, 1, 1, 2, 2, 1, 250.0)]
    guard = query(path, "SELECT guard_name, outcome, blocked, reason, stage, action FROM guard_results")
    assert [tuple(g.values()) for g in guard] == [("pii", "blocked", True, "email found", "llm_input", "block")]
    memory = query(path, "SELECT operation, store_id, record_id, record_count FROM memory_operations ORDER BY 1")
    assert [tuple(m.values()) for m in memory] == [
        ("search_memory", "prefs", None, 3),
        ("upsert_memory", "prefs", "r9", None),
    ]
    skills = query(path, "SELECT operation, skill_name, skill_version FROM tool_invocations ORDER BY start_time")
    assert [tuple(s.values()) for s in skills] == [("load_skill", "pdf", "2"), ("read_skill_resource", "pdf", None)]
    call = query(
        path,
        "SELECT request_stream, time_to_first_chunk_ms, prompt_name, prompt_version, response_id, "
        "conversation_id FROM provider_calls",
    )
    assert [tuple(c.values()) for c in call] == [(True, 250.0, "triage", "3", "resp_1", None)]
    sessions = query(path, "SELECT session_id, runs, provider_calls FROM sessions")
    assert [tuple(s.values()) for s in sessions] == [("conv-1", 1, 1)]


def test_evaluation_results(rec: Recorder, tmp_path: Path) -> None:
    """gen_ai.evaluation.result log records: parented to the judged span, or naming its gen_ai.response.id."""
    with (
        rec.span("invoke_agent judge_me", **{"gen_ai.operation.name": "invoke_agent"}),
        chat(rec, "gpt-4o", "openai", (100, 10), **{"gen_ai.response.id": "chatcmpl-1"}),
    ):
        rec.event(
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "Relevance",
                "gen_ai.evaluation.score.value": 4.0,
                "gen_ai.evaluation.score.label": "relevant",
                "gen_ai.evaluation.explanation": "on topic",
            },
        )
    # a later evaluation, outside any span, naming the response it judges
    rec.event(
        "gen_ai.evaluation.result",
        {
            "gen_ai.evaluation.name": "Groundedness",
            "gen_ai.evaluation.score.value": 0.2,
            "gen_ai.evaluation.score.label": "fail",
            "gen_ai.response.id": "chatcmpl-1",
        },
    )
    path = rec.store(tmp_path / "evals.duckdb")
    rows = query(
        path,
        "SELECT e.evaluation_name, e.score_value, e.score_label, e.explanation, e.joined_by, e.judged_category, "
        "e.provider, e.model, e.response_id, r.agent_name FROM evaluations e JOIN runs r USING (run_id) "
        "ORDER BY e.evaluation_name",
    )
    assert [tuple(r.values()) for r in rows] == [
        (
            "Groundedness",
            0.2,
            "fail",
            None,
            "response_id",
            "provider_call",
            "openai",
            "gpt-4o",
            "chatcmpl-1",
            "judge_me",
        ),
        (
            "Relevance",
            4.0,
            "relevant",
            "on topic",
            "parent",
            "provider_call",
            "openai",
            "gpt-4o",
            "chatcmpl-1",
            "judge_me",
        ),
    ]
    # delivering the logs again changes nothing
    write_logs(path, list(rec.logs_out.get_finished_logs()))
    assert query(path, "SELECT count(*) AS n FROM evaluations")[0]["n"] == 2


def test_call_content_from_operation_details(rec: Recorder, tmp_path: Path) -> None:
    """gen_ai.client.inference.operation.details log records give a call its input/output when the span has
    none; content on the span wins."""
    messages = [{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}], "finish_reason": "stop"}]
    with chat(rec, "gpt-4o", "openai", (100, 10)):
        rec.event(
            "gen_ai.client.inference.operation.details",
            {"gen_ai.input.messages": json.dumps(messages), "gen_ai.output.messages": json.dumps(answer)},
        )
    with chat(rec, "gpt-4o", "openai", (100, 10), **{"gen_ai.input.messages": json.dumps(messages)}):
        rec.event(
            "gen_ai.client.inference.operation.details",
            {"gen_ai.input.messages": json.dumps([{"role": "user", "parts": []}])},
        )
    path = rec.store(tmp_path / "details.duckdb")
    rows = query(path, "SELECT input_messages, output_messages, content_source FROM call_content ORDER BY start_time")
    assert [
        (
            json.loads(r["input_messages"]),
            r["output_messages"] and json.loads(r["output_messages"]),
            r["content_source"],
        )
        for r in rows
    ] == [(messages, answer, "log"), (messages, None, "span")]


def test_multi_process_rollups(rec: Recorder, tmp_path: Path) -> None:
    """run_parent delegates to run_remote (a child process continuing the trace under its own run id: a remote
    parent) and to a third-party trace linked to its step (a span link); run_remote delegates further to a
    second linked trace. Roll-ups add the delegated work; each delegated run is counted once."""
    from opentelemetry import context, trace
    from opentelemetry.trace import Link, NonRecordingSpan

    own = {"otel_agent.run.id": "run_parent"}
    with (
        rec.span("invoke_workflow parent", **{"gen_ai.operation.name": "invoke_workflow", **own}),
        rec.span("step", **{"gen_ai.operation.name": "plan", **own}) as step,
    ):
        handoff_ctx = step.get_span_context()
        with chat(rec, "gpt-4o", "openai", (100, 10), **own):
            pass
    # the child process: the trace context arrives remote, the child names its own run
    remote = trace.set_span_in_context(
        NonRecordingSpan(
            trace.SpanContext(
                handoff_ctx.trace_id, handoff_ctx.span_id, is_remote=True, trace_flags=handoff_ctx.trace_flags
            )
        )
    )
    child = {"otel_agent.run.id": "run_remote"}
    with rec.tracer.start_as_current_span(
        "invoke_workflow remote", context=remote, attributes={"gen_ai.operation.name": "invoke_workflow", **child}
    ) as rs:
        remote_ctx = rs.get_span_context()
        with chat(rec, "gpt-4o", "openai", (200, 20), **child) as failing:
            failing.set_status(Status(StatusCode.ERROR, "TimeoutError: slow"))
    # two third-party traces started for delegated work, linked to the spans that asked for it
    for ctx, tokens in ((handoff_ctx, (300, 30)), (remote_ctx, (400, 40))):
        with (
            rec.tracer.start_as_current_span(
                "invoke_agent worker",
                context=context.Context(),
                links=[Link(ctx)],
                attributes={"gen_ai.operation.name": "invoke_agent"},
            ),
            chat(rec, "gpt-4o", "openai", tokens),
        ):
            pass
    path = rec.store(tmp_path / "rollup.duckdb")
    rows = query(
        path,
        "SELECT run_id, delegated_by_run_id, delegated_runs, provider_calls, rollup_provider_calls, "
        "rollup_input_tokens, rollup_errors, rollup_cost_usd, cost_usd FROM run_rollups "
        "ORDER BY rollup_input_tokens DESC",
    )
    worker_a, worker_b = sorted(
        (r["run_id"] for r in rows if r["run_id"] not in ("run_parent", "run_remote")),
        key=lambda rid: next(x["rollup_input_tokens"] for x in rows if x["run_id"] == rid),
    )
    by = {r["run_id"]: r for r in rows}
    assert {
        k: tuple(v for n, v in by[k].items() if n not in ("run_id", "rollup_cost_usd", "cost_usd")) for k in by
    } == {
        "run_parent": (None, 3, 1, 4, 1000, 1),
        "run_remote": ("run_parent", 1, 1, 2, 600, 1),
        worker_a: ("run_parent", 0, 1, 1, 300, 0),
        worker_b: ("run_remote", 0, 1, 1, 400, 0),
    }
    assert by["run_parent"]["rollup_cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    # a total over runs counts delegated work once: own figures of all runs = rollups of the undelegated ones
    total = query(path, "SELECT sum(rollup_input_tokens) AS n FROM run_rollups WHERE delegated_by_run_id IS NULL")
    assert total[0]["n"] == query(path, "SELECT sum(input_tokens) AS n FROM runs")[0]["n"] == 1000


def test_tool_usage_counts_a_nested_tool_once(rec: Recorder, tmp_path: Path) -> None:
    with (
        rec.span("search_tool", **{"openinference.span.kind": "TOOL", "tool.name": "search"}),
        rec.span("search_tool_impl", **{"openinference.span.kind": "TOOL", "tool.name": "search"}),
    ):
        pass
    path = rec.store(tmp_path / "tool_usage.duckdb")
    assert [tuple(r.values()) for r in query(path, "SELECT tool_name, calls FROM tool_usage")] == [("search", 1)]
