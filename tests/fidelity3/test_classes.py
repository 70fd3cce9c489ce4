"""The failure classes of issue 32 ("Fidelity III"), each held by a rule over the facts spans carry, whatever
instrumentation sends them. The spans are made with the OpenTelemetry SDK as the instrumentations named in each
test make them (their attribute names, span names, status and events), written through the embedded exporter;
``write_store`` checks the maintained runs against the query-time SQL first. The real instrumentations run in
tests/fidelity3/test_scenarios.py and tests/vercel_ai/.
"""

# ruff: noqa: SIM117 — nested `with` blocks draw the span trees

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from tests.derived_runs.runs_support import query, write_store


def traced(body: Callable[[Tracer], None]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    body(provider.get_tracer("fidelity3"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


@contextmanager
def span(tracer: Tracer, name: str, **attributes: Any) -> Iterator[Span]:
    with tracer.start_as_current_span(name, attributes=attributes, record_exception=False) as s:
        yield s


def fail(s: Span, exc: BaseException, message: str | None = None) -> None:
    s.record_exception(exc)
    s.set_status(Status(StatusCode.ERROR, message if message is not None else str(exc)))


# -- class 1 ---------------------------------------------------------------------------------------------------


def test_class1_root_agent_names_the_run(tmp_path: Path) -> None:
    """The agent at the root names the run, not the first sub-agent reached through an agent-as-tool or a team
    member; under a workflow root, the first agent it ran still names it."""

    def body(t: Tracer) -> None:
        # GenAI: an orchestrator that calls a researcher agent as a tool
        with span(t, "invoke_agent orchestrator", **{"gen_ai.operation.name": "invoke_agent"}):
            with span(
                t,
                "execute_tool researcher",
                **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "researcher"},
            ):
                with span(
                    t,
                    "invoke_agent researcher",
                    **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"},
                ):
                    with span(
                        t,
                        "chat gpt-4o",
                        **{
                            "gen_ai.operation.name": "chat",
                            "gen_ai.provider.name": "openai",
                            "gen_ai.request.model": "gpt-4o",
                        },
                    ):
                        pass
        # OpenInference: a team (AGENT root) whose member is an AGENT
        with span(t, "Team.run", **{"openinference.span.kind": "AGENT", "agent.name": "support_team"}):
            with span(t, "Agent.run", **{"openinference.span.kind": "AGENT", "agent.name": "billing_member"}):
                with span(t, "llm", **{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}):
                    pass
        # a workflow root: the first agent step names it
        with span(
            t,
            "invoke_workflow pipeline",
            **{"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "pipeline"},
        ):
            with span(t, "invoke_agent planner", **{"gen_ai.operation.name": "invoke_agent"}):
                pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(path, "SELECT workflow_name, agent_name FROM runs ORDER BY start_time")
    assert [r["agent_name"] for r in got] == ["orchestrator", "support_team", "planner"]


# -- class 2 ---------------------------------------------------------------------------------------------------


def test_class2_bookkeeping_only_traces_are_not_runs(tmp_path: Path) -> None:
    """An agent's creation, a lone receipt transition, a framework's setup span: traces, not runs."""

    def body(t: Tracer) -> None:
        with span(t, "create_agent helper", **{"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "helper"}):
            pass
        with span(
            t,
            "otel_agent.receipt.accepted",
            **{
                "otel_agent.record.kind": "receipt_transition",
                "otel_agent.receipt.transition": "accepted",
                "otel_agent.receipt.operation_id": "op_1",
                "otel_agent.receipt.handoff_id": "h_1",
            },
        ):
            pass
        with span(t, "framework.setup"):
            pass
        with span(t, "invoke_agent helper", **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}):
            with span(t, "chat m", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}):
                pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    runs = query(path, "SELECT agent_name, provider_calls FROM runs")
    assert runs == [{"agent_name": "helper", "provider_calls": 1}]
    # the bookkeeping stays visible as traces
    assert query(path, "SELECT count(DISTINCT trace_id) AS n FROM classified_spans") == [{"n": 4}]
    assert query(path, "SELECT count(*) AS n FROM classified_spans WHERE work") == [{"n": 2}]


# -- classes 3 and 4 -------------------------------------------------------------------------------------------


def test_class3_one_failure_counted_once(tmp_path: Path) -> None:
    """The failing call in error, the agent span around it status OK with the same exception event, the root in
    error with error.type: one failure, at the call."""

    def body(t: Tracer) -> None:
        with span(t, "invoke_agent root", **{"gen_ai.operation.name": "invoke_agent"}) as root:
            with span(t, "invoke_agent inner", **{"gen_ai.operation.name": "invoke_agent"}) as inner:
                with span(
                    t, "chat gpt-4o", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
                ) as call:
                    fail(call, TimeoutError("upstream timed out"))
                inner.record_exception(TimeoutError("upstream timed out"))  # status left OK
            root.set_attribute("error.type", "AgentRunError")
            root.set_status(Status(StatusCode.ERROR, "run failed"))

    path = write_store(tmp_path / "s.duckdb", traced(body))
    run = query(path, "SELECT status, error_type, errors, spans_in_error FROM runs")
    assert run == [{"status": "error", "error_type": "AgentRunError", "errors": 1, "spans_in_error": 2}]
    origins = query(path, "SELECT span_name, error_type FROM classified_spans WHERE is_error_origin")
    assert origins == [{"span_name": "chat gpt-4o", "error_type": "TimeoutError"}]


def test_class4_error_type_from_the_origin(tmp_path: Path) -> None:
    """A root in error with free text only takes the type of the origin's exception; with no type anywhere, the
    root's message is what error_type holds."""

    def body(t: Tracer) -> None:
        with span(t, "invoke_agent typed", **{"gen_ai.operation.name": "invoke_agent"}) as root:
            with span(
                t, "execute_tool lookup", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
            ) as tool:
                fail(tool, KeyError("city"))
            root.set_status(Status(StatusCode.ERROR, "run status: error"))
        with span(t, "invoke_agent untyped", **{"gen_ai.operation.name": "invoke_agent"}) as root:
            with span(t, "chat m", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}) as call:
                call.set_status(Status(StatusCode.ERROR, "upstream said no"))
            root.set_status(Status(StatusCode.ERROR, "run status: error"))

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(path, "SELECT agent_name, status, error_type, errors FROM runs ORDER BY start_time")
    assert got == [
        {"agent_name": "typed", "status": "error", "error_type": "KeyError", "errors": 1},
        {"agent_name": "untyped", "status": "error", "error_type": "run status: error", "errors": 1},
    ]


# -- class 6 (the facts; the SDK itself runs in tests/vercel_ai) -----------------------------------------------


def test_class6_vercel_ai_sdk_spans(tmp_path: Path) -> None:
    """ai.* telemetry: ai.toolCall spans are tools, the function id names the run, 'openai.responses' is the
    provider openai, the root's ai.usage.* repeats the steps' and is not counted again, metadata is kept."""
    common = {"ai.telemetry.functionId": "support-bot", "ai.telemetry.metadata.user_id": "u-1"}

    def body(t: Tracer) -> None:
        with span(
            t,
            "ai.generateText",
            **common,
            **{
                "ai.operationId": "ai.generateText",
                "ai.model.provider": "openai.responses",
                "ai.usage.inputTokens": 300,
                "ai.usage.outputTokens": 30,
            },
        ):
            with span(
                t,
                "ai.generateText.doGenerate",
                **common,
                **{
                    "ai.operationId": "ai.generateText.doGenerate",
                    "gen_ai.system": "openai.responses",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": 100,
                    "gen_ai.usage.output_tokens": 10,
                    "ai.usage.cachedInputTokens": 40,
                },
            ):
                pass
            with span(
                t,
                "ai.toolCall",
                **common,
                **{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "search", "ai.toolCall.id": "call_1"},
            ):
                pass
            with span(
                t,
                "ai.generateText.doGenerate",
                **common,
                **{
                    "ai.operationId": "ai.generateText.doGenerate",
                    "gen_ai.system": "openai.responses",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "ai.usage.inputTokens": 200,
                    "ai.usage.outputTokens": 20,
                },
            ):
                pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    run = query(
        path,
        "SELECT workflow_name, convention, provider_calls, tool_invocations, input_tokens, "
        "output_tokens, cache_read_tokens, metadata FROM runs",
    )
    assert run == [
        {
            "workflow_name": "support-bot",
            "convention": "vercel_ai",
            "provider_calls": 2,
            "tool_invocations": 1,
            "input_tokens": 300,
            "output_tokens": 30,
            "cache_read_tokens": 40,
            "metadata": {"user_id": "u-1"},
        }
    ]
    assert query(path, "SELECT DISTINCT provider FROM provider_calls") == [{"provider": "openai"}]
    assert query(path, "SELECT tool_name, tool_call_id FROM tool_invocations") == [
        {"tool_name": "search", "tool_call_id": "call_1"}
    ]


# -- class 7 ---------------------------------------------------------------------------------------------------


def test_class7_time_to_first_chunk_from_three_names(tmp_path: Path) -> None:
    def body(t: Tracer) -> None:
        for name, value in (
            ("gen_ai.response.time_to_first_chunk", 0.25),
            ("gen_ai.client.operation.time_to_first_chunk", 0.5),
            ("ai.response.msToFirstChunk", 750.0),
        ):
            with span(t, f"chat {name}", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", name: value}):
                pass
        with span(t, "chat unstreamed", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}):
            pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(
        path, "SELECT span_name, time_to_first_chunk_ms AS ttfc, request_stream FROM provider_calls ORDER BY start_time"
    )
    assert [(r["ttfc"], r["request_stream"]) for r in got] == [
        (250.0, True),
        (500.0, True),
        (750.0, True),
        (None, None),
    ]


# -- class 8 ---------------------------------------------------------------------------------------------------


def test_class8_user_metadata_on_runs_and_calls(tmp_path: Path) -> None:
    """OpenInference metadata (JSON) and tags, Vercel ai.telemetry.metadata.*: one MAP column, filterable."""

    def body(t: Tracer) -> None:
        with span(
            t,
            "agent",
            **{
                "openinference.span.kind": "AGENT",
                "agent.name": "a",
                "metadata": '{"tenant": "acme", "tier": 2, "nested": {"k": 1}}',
                "tag.tags": ["beta", "eu"],
            },
        ):
            with span(
                t,
                "llm",
                **{
                    "openinference.span.kind": "LLM",
                    "llm.model_name": "gpt-4o",
                    "metadata": '{"tenant": "acme", "tags": "x"}',
                    "tag.tags": ["beta"],
                },
            ):
                pass
        with span(
            t,
            "agent",
            **{
                "openinference.span.kind": "AGENT",
                "agent.name": "b",
                "metadata": "not json {",
                "ai.telemetry.metadata.tenant": "other",
            },
        ):
            pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    runs = query(path, "SELECT agent_name, metadata FROM runs ORDER BY start_time")
    assert runs == [
        {"agent_name": "a", "metadata": {"tenant": "acme", "tier": "2", "nested": '{"k":1}', "tags": '["beta","eu"]'}},
        {"agent_name": "b", "metadata": {"tenant": "other"}},
    ]
    assert query(path, "SELECT agent_name FROM runs WHERE metadata['tenant'] = 'acme'") == [{"agent_name": "a"}]
    assert query(path, "SELECT metadata['tags'] AS tags FROM provider_calls") == [{"tags": "x"}]


# -- 2026 conventions ------------------------------------------------------------------------------------------


def test_cache_write_tokens_priced_at_their_own_rate(tmp_path: Path) -> None:
    """gen_ai.usage.cache_write.input_tokens (the 2026 name of cache_creation) is read and priced at the cache
    write rate, cache reads at theirs, the rest of the input at the input rate (input tokens include both)."""

    def body(t: Tracer) -> None:
        with span(
            t,
            "chat claude-sonnet-4",
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "anthropic",
                "gen_ai.request.model": "claude-sonnet-4",
                "gen_ai.usage.input_tokens": 1_000_000,
                "gen_ai.usage.cache_read.input_tokens": 200_000,
                "gen_ai.usage.cache_write.input_tokens": 300_000,
                "gen_ai.usage.output_tokens": 0,
            },
        ):
            pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(path, "SELECT cache_read_tokens, cache_creation_tokens, cost_usd FROM provider_calls")
    # 500k uncached at 3.00, 200k read at 0.30, 300k written at 3.75 (per million)
    assert got == [
        {"cache_read_tokens": 200_000, "cache_creation_tokens": 300_000, "cost_usd": 0.5 * 3.0 + 0.2 * 0.3 + 0.3 * 3.75}
    ]


def test_agent_step_operations_are_steps(tmp_path: Path) -> None:
    def body(t: Tracer) -> None:
        with span(t, "invoke_agent a", **{"gen_ai.operation.name": "invoke_agent"}):
            for i in (1, 2):
                with span(t, f"step {i}", **{"gen_ai.operation.name": "agent_step"}):
                    with span(t, "chat m", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}):
                        pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    assert query(path, "SELECT steps, provider_calls FROM runs") == [{"steps": 2, "provider_calls": 2}]
    assert query(path, "SELECT step_name, provider_calls FROM steps ORDER BY start_time") == [
        {"step_name": "step 1", "provider_calls": 1},
        {"step_name": "step 2", "provider_calls": 1},
    ]


def test_tool_call_decision_and_guardrail_verdicts_are_decisions(tmp_path: Path) -> None:
    """gen_ai.tool.call.decision (span event here; a log record reads the same) and a third-party guardrail's
    verdict land in `decisions` beside ours: the model proposed, the gate decided; the provider's verdict kept."""

    def body(t: Tracer) -> None:
        with span(t, "invoke_agent ops", **{"gen_ai.operation.name": "invoke_agent"}) as root:
            root.add_event(
                "gen_ai.tool.call.decision",
                {
                    "gen_ai.tool.call.decision.outcome": "require_approval",
                    "gen_ai.tool.name": "delete_db",
                    "gen_ai.tool.call.id": "call_9",
                },
            )
            root.add_event(
                "gen_ai.tool.call.decision",
                {
                    "gen_ai.tool.call.decision.outcome": "deny",
                    "gen_ai.tool.name": "rm",
                    "gen_ai.tool.call.id": "call_10",
                },
            )
            with span(
                t,
                "apply_guardrail pii",
                **{
                    "gen_ai.operation.name": "apply_guardrail",
                    "gen_ai.guardrail.name": "pii",
                    "gen_ai.guardrail.verdict.type": "deny",
                },
            ):
                pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(
        path,
        "SELECT decision_id, name, model_decision, model_action, effective_decision, mismatch, review_required, "
        "source, provider_verdict, run_id IS NOT NULL AS in_run FROM decisions ORDER BY decision_id",
    )
    assert [r["decision_id"].split(":")[0] for r in got] == ["guardrail", "tool_call", "tool_call"]
    assert got[1:] == [
        {
            "decision_id": "tool_call:call_10",
            "name": "tool_call rm",
            "model_decision": "allow",
            "model_action": "rm",
            "effective_decision": "deny",
            "mismatch": True,
            "review_required": False,
            "source": "gen_ai.tool.call.decision",
            "provider_verdict": "deny",
            "in_run": True,
        },
        {
            "decision_id": "tool_call:call_9",
            "name": "tool_call delete_db",
            "model_decision": "allow",
            "model_action": "delete_db",
            "effective_decision": "require_approval",
            "mismatch": True,
            "review_required": True,
            "source": "gen_ai.tool.call.decision",
            "provider_verdict": "require_approval",
            "in_run": True,
        },
    ]
    guard = got[0]
    assert (guard["name"], guard["effective_decision"], guard["provider_verdict"], guard["source"]) == (
        "guardrail pii",
        "deny",
        "deny",  # the provider's own verdict, as it came
        "guardrail",
    )


def test_evaluation_by_response_id_inside_the_evaluators_span(tmp_path: Path) -> None:
    """A gen_ai.evaluation.result record parented to the evaluator's own span but naming the judged response is
    attached to the call with that gen_ai.response.id."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from tests.derived_runs.runs_support import write_logs

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logger_provider.get_logger("evaluator")

    def body(t: Tracer) -> None:
        with span(
            t,
            "chat gpt-4o",
            **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.id": "resp-7"},
        ):
            pass
        with span(t, "evaluate relevance"):  # the evaluator's span, another trace
            logger.emit(
                event_name="gen_ai.evaluation.result",
                attributes={
                    "gen_ai.evaluation.name": "Relevance",
                    "gen_ai.evaluation.score.value": 0.9,
                    "gen_ai.response.id": "resp-7",
                },
            )

    spans = traced(body)
    logger_provider.shutdown()
    path = write_store(tmp_path / "s.duckdb", spans)
    write_logs(path, [r for r in logs.get_finished_logs()])
    got = query(path, "SELECT evaluation_name, joined_by, judged_span_name, judged_category FROM evaluations")
    assert got == [
        {
            "evaluation_name": "Relevance",
            "joined_by": "response_id",
            "judged_span_name": "chat gpt-4o",
            "judged_category": "provider_call",
        }
    ]


def test_a2a_context_id_is_the_conversation(tmp_path: Path) -> None:
    """An A2A span's a2a.context.id is the conversation its task belongs to (sessions), when no
    gen_ai.conversation.id says otherwise; its task states stay receipts (tests/derived_evidence/test_receipts.py)."""

    def body(t: Tracer) -> None:
        for task in ("t1", "t2"):
            with span(t, "invoke_agent travel", **{"gen_ai.operation.name": "invoke_agent"}):
                with span(
                    t,
                    "a2a.send_message",
                    **{"a2a.task.id": task, "a2a.task.state": "TASK_STATE_COMPLETED", "a2a.context.id": "ctx-42"},
                ):
                    pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    assert query(path, "SELECT session_id FROM runs") == [{"session_id": "ctx-42"}, {"session_id": "ctx-42"}]
    assert query(path, "SELECT session_id, runs FROM sessions") == [{"session_id": "ctx-42", "runs": 2}]


def test_feedback_added_later_tied_by_a_span_link(tmp_path: Path) -> None:
    """Feedback / an annotation recorded later, in a trace of its own, as a span linked to the span it judges
    (OpenInference EVALUATOR, or gen_ai.evaluation.* on the span); and a gen_ai.evaluation.result span event."""
    from opentelemetry.trace import Link

    def body(t: Tracer) -> None:
        with span(t, "invoke_agent helper", **{"gen_ai.operation.name": "invoke_agent"}):
            with span(t, "chat gpt-4o", **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}) as call:
                call.add_event(
                    "gen_ai.evaluation.result",
                    {"gen_ai.evaluation.name": "Toxicity", "gen_ai.evaluation.score.value": 0.0},
                )
                judged = call.get_span_context()
        # a day later: a user's thumbs-down, in a trace of its own
        with t.start_as_current_span(
            "user feedback",
            links=[Link(judged)],
            attributes={
                "gen_ai.evaluation.name": "user_feedback",
                "gen_ai.evaluation.score.label": "thumbs_down",
                "gen_ai.evaluation.score.value": -1.0,
            },
        ):
            pass

    path = write_store(tmp_path / "s.duckdb", traced(body))
    got = query(
        path,
        "SELECT evaluation_name, score_value, score_label, joined_by, judged_span_name, r.agent_name "
        "FROM evaluations JOIN runs r USING (run_id) ORDER BY evaluation_name",
    )
    assert got == [
        {
            "evaluation_name": "Toxicity",
            "score_value": 0.0,
            "score_label": None,
            "joined_by": "span_event",
            "judged_span_name": "chat gpt-4o",
            "agent_name": "helper",
        },
        {
            "evaluation_name": "user_feedback",
            "score_value": -1.0,
            "score_label": "thumbs_down",
            "joined_by": "link",
            "judged_span_name": "chat gpt-4o",
            "agent_name": "helper",
        },
    ]
    # the feedback trace alone is bookkeeping, not a run
    assert query(path, "SELECT count(*) AS n FROM runs") == [{"n": 1}]
