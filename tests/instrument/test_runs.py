"""Flow run, step and skill: names, kinds, attributes, parentage, budgets, errors, decorators, asyncio."""

from __future__ import annotations

import asyncio

import pytest
from instrument_support import Spans, parent_id, span_id
from opentelemetry.trace import SpanKind, StatusCode

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A


def test_hierarchy_names_kinds_attributes_and_parentage(spans: Spans) -> None:
    with oi.flow_run("deep_research", run_id="run_1", agent_name="researcher", conversation_id="c1") as run:
        assert oi.current_run() is run
        with oi.step("clarify", step_id="step_1", iteration=2) as st:
            assert oi.current_operation() is st
            with oi.skill("research-planner", "1.0.0", invocation_id="sk_1"):
                pass
    assert oi.current_run() is None

    flow, step_span, skill_span = spans.one("flow_run"), spans.one("step"), spans.one("skill_invocation")
    assert flow.name == "invoke_workflow deep_research"
    assert flow.kind is SpanKind.INTERNAL
    assert dict(flow.attributes) == {
        A.GEN_AI_OPERATION_NAME: "invoke_workflow",
        A.GEN_AI_WORKFLOW_NAME: "deep_research",
        A.RECORD_KIND: "flow_run",
        A.RUN_ID: "run_1",
        A.GEN_AI_AGENT_NAME: "researcher",
        A.GEN_AI_CONVERSATION_ID: "c1",
        A.RUN_USAGE_MODEL_CALLS: 0,
        A.RUN_USAGE_TOOL_CALLS: 0,
        A.RUN_USAGE_COST_USD: 0.0,
    }
    assert flow.parent is None
    assert step_span.name == "step clarify"
    assert step_span.kind is SpanKind.INTERNAL
    assert dict(step_span.attributes) == {
        A.RECORD_KIND: "step",
        A.RUN_ID: "run_1",
        A.STEP_ID: "step_1",
        A.STEP_NAME: "clarify",
        A.ITERATION: 2,
    }
    assert parent_id(step_span) == span_id(flow)
    assert skill_span.name == "skill research-planner@1.0.0"
    assert skill_span.attributes[A.SKILL_NAME] == "research-planner"
    assert skill_span.attributes[A.SKILL_VERSION] == "1.0.0"
    assert skill_span.attributes[A.SKILL_INVOCATION_ID] == "sk_1"
    assert skill_span.attributes[A.RUN_ID] == "run_1"
    assert skill_span.attributes[A.STEP_ID] == "step_1"
    assert parent_id(skill_span) == span_id(step_span)
    assert {s.context.trace_id for s in spans.all} == {flow.context.trace_id}


def test_generated_ids_are_distinct_and_exposed_on_the_handle(spans: Spans) -> None:
    with oi.flow_run("w") as r1, oi.step("s") as s1:
        pass
    with oi.flow_run("w") as r2:
        pass
    assert r1.run_id != r2.run_id
    assert r1.run_id.startswith("run_")
    assert s1.step_id.startswith("step_")
    assert sorted(s.attributes[A.RUN_ID] for s in spans.kind("flow_run")) == sorted([r1.run_id, r2.run_id])


def test_budgets_observed_counts_and_exceeded_event(spans: Spans) -> None:
    with oi.flow_run("w", max_model_calls=1, max_tool_calls=3, max_cost_usd=0.05) as run:
        for _ in range(2):
            with oi.provider_call("openai", "gpt-4o") as call:
                call.set_cost(0.03)
        with oi.tool_invocation("search"):
            pass
    assert run.model_calls == 2
    assert run.tool_calls == 1
    assert run.cost_usd == pytest.approx(0.06)
    assert run.budget_exceeded == ("model_calls", "cost_usd")
    flow = spans.one("flow_run")
    assert flow.attributes[A.RUN_BUDGET_MAX_MODEL_CALLS] == 1
    assert flow.attributes[A.RUN_BUDGET_MAX_TOOL_CALLS] == 3
    assert flow.attributes[A.RUN_BUDGET_MAX_COST_USD] == 0.05
    assert flow.attributes[A.RUN_USAGE_MODEL_CALLS] == 2
    assert flow.attributes[A.RUN_USAGE_TOOL_CALLS] == 1
    assert flow.attributes[A.RUN_USAGE_COST_USD] == pytest.approx(0.06)
    assert flow.attributes[A.RUN_BUDGET_EXCEEDED] is True
    assert flow.attributes[A.RUN_BUDGET_EXCEEDED_LIMITS] == ("model_calls", "cost_usd")
    events = [(e.name, dict(e.attributes)) for e in flow.events]
    assert events == [
        (A.EVENT_BUDGET_EXCEEDED, {A.BUDGET_NAME: "model_calls", A.BUDGET_LIMIT: 1.0, A.BUDGET_USED: 2.0}),
        (A.EVENT_BUDGET_EXCEEDED, {A.BUDGET_NAME: "cost_usd", A.BUDGET_LIMIT: 0.05, A.BUDGET_USED: 0.06}),
    ]


def test_budget_not_exceeded_is_recorded_false(spans: Spans) -> None:
    with oi.flow_run("w", max_tool_calls=2), oi.tool_invocation("t"):
        pass
    flow = spans.one("flow_run")
    assert flow.attributes[A.RUN_BUDGET_EXCEEDED] is False
    assert A.RUN_BUDGET_EXCEEDED_LIMITS not in flow.attributes


def test_enforced_budget_refuses_the_call_and_records_a_blocked_guard(spans: Spans) -> None:
    with oi.flow_run("w", max_model_calls=1, enforce_budgets=True) as run, oi.step("s"):
        with oi.provider_call("openai", "gpt-4o"):
            pass
        with pytest.raises(oi.BudgetExceededError) as info, oi.provider_call("openai", "gpt-4o"):
            pytest.fail("must not start")
    assert (info.value.budget, info.value.limit, info.value.used) == ("model_calls", 1, 1)
    assert run.model_calls == 1
    assert len(spans.kind("provider_call")) == 1
    guard = spans.one("guard_result")
    assert guard.attributes[A.GUARD_NAME] == "budget.model_calls"
    assert guard.attributes[A.GUARD_OUTCOME] == "blocked"
    assert guard.attributes[A.GUARD_STAGE] == "budget"
    assert guard.attributes[A.RUN_ID] == run.run_id


def test_enforced_tool_and_cost_budgets(spans: Spans) -> None:
    with (
        oi.flow_run("w", max_tool_calls=0, enforce_budgets=True),
        pytest.raises(oi.BudgetExceededError, match="tool_calls"),
        oi.tool_invocation("t"),
    ):
        pass
    with oi.flow_run("w", max_cost_usd=0.01, enforce_budgets=True):
        with oi.provider_call("openai", "gpt-4o") as call:
            call.set_cost(0.02)
        with pytest.raises(oi.BudgetExceededError, match="cost_usd"), oi.tool_invocation("t"):
            pass
    assert [g.attributes[A.GUARD_NAME] for g in spans.kind("guard_result")] == [
        "budget.tool_calls",
        "budget.cost_usd",
    ]


def test_exception_marks_span_error_with_error_type_and_event(spans: Spans) -> None:
    with pytest.raises(KeyError), oi.flow_run("w"), oi.step("s"):
        raise KeyError("missing")
    for s in (spans.one("step"), spans.one("flow_run")):
        assert s.status.status_code is StatusCode.ERROR
        assert s.attributes[A.ERROR_TYPE] == "KeyError"
        assert [e.name for e in s.events][-1] == "exception"
        assert s.events[-1].attributes["exception.type"] == "KeyError"


def test_fail_marks_error_without_raising(spans: Spans) -> None:
    with oi.flow_run("w"), oi.provider_call("openai", "gpt-4o") as call:
        call.fail("rate_limited", "429 from provider")
    s = spans.one("provider_call")
    assert s.status.status_code is StatusCode.ERROR
    assert s.status.description == "429 from provider"
    assert s.attributes[A.ERROR_TYPE] == "rate_limited"


def test_helpers_are_single_use_and_handles_inactive_outside(spans: Spans) -> None:
    st = oi.step("s")
    with st:
        pass
    with pytest.raises(oi.NotActiveError), st:
        pass
    with pytest.raises(oi.NotActiveError):
        st.set_attribute("x", 1)
    call = oi.provider_call("openai", "m")
    with pytest.raises(oi.NotActiveError):
        call.set_usage(1, 2)


def test_invalid_arguments_raise_specific_errors() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.flow_run("")
    with pytest.raises(oi.InvalidValueError):
        oi.flow_run("w", max_model_calls=-1)
    with pytest.raises(oi.InvalidIdError):
        oi.step("s", step_id="")
    with pytest.raises(oi.InvalidValueError):
        oi.skill("planner", "")


def test_decorators_sync_and_async_make_a_fresh_span_per_call(spans: Spans) -> None:
    @oi.flow_run("decorated")
    def run_it(x: int) -> str:
        run = oi.current_run()
        assert run is not None
        return run.run_id

    @oi.step("async_step")
    async def step_it() -> str:
        await asyncio.sleep(0)
        op = oi.current_operation()
        assert isinstance(op, oi.Step)
        return op.step_id

    first, second = run_it(1), run_it(2)
    assert first != second
    step_ids = asyncio.run(_gather(step_it))
    assert len(set(step_ids)) == 2
    assert [s.name for s in spans.kind("flow_run")] == ["invoke_workflow decorated"] * 2
    assert sorted(s.attributes[A.STEP_ID] for s in spans.kind("step")) == sorted(step_ids)


async def _gather(fn):  # type: ignore[no-untyped-def]
    return await asyncio.gather(fn(), fn())


def test_async_with_and_concurrent_tasks_keep_their_own_run_and_step(spans: Spans) -> None:
    async def one(name: str) -> str:
        async with oi.flow_run(name) as run, oi.step(f"{name}_step"):
            await asyncio.sleep(0.01)  # interleave with the other task
            with oi.provider_call("openai", "gpt-4o"):
                await asyncio.sleep(0.01)
        return run.run_id

    async def main() -> list[str]:
        return await asyncio.gather(one("a"), one("b"))

    run_a, run_b = asyncio.run(main())
    calls = spans.kind("provider_call")
    steps = {s.attributes[A.STEP_ID]: s for s in spans.kind("step")}
    assert len(calls) == 2
    for call in calls:
        step_span = steps[call.attributes[A.STEP_ID]]
        assert parent_id(call) == span_id(step_span)
        assert call.attributes[A.RUN_ID] == step_span.attributes[A.RUN_ID]
    assert {steps[c.attributes[A.STEP_ID]].attributes[A.STEP_NAME] for c in calls} == {"a_step", "b_step"}
    assert {c.attributes[A.RUN_ID] for c in calls} == {run_a, run_b}


def test_nested_flow_run_starts_a_fresh_run_scope(spans: Spans) -> None:
    with oi.flow_run("outer", run_id="outer"), oi.step("s"), oi.flow_run("inner", run_id="inner"):
        oi.claim("c", confidence="low")
    claim = spans.one("claim")
    assert claim.attributes[A.RUN_ID] == "inner"
    assert A.STEP_ID not in claim.attributes


def test_flow_run_tracer_provider_argument_binds_only_inside(spans: Spans) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    other = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(other))
    with oi.flow_run("w", tracer_provider=provider), oi.step("inside"):
        pass
    with oi.step("outside"):
        pass
    # each with its announcement (a pending span) on the same provider
    assert sorted(s.name for s in other.get_finished_spans()) == [
        "invoke_workflow w",
        "invoke_workflow w",
        "step inside",
        "step inside",
    ]
    assert [s.name for s in spans.all] == ["step outside"]


def test_configure_sets_a_library_provider_without_touching_the_global() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    global_before = trace.get_tracer_provider()
    oi.configure(tracer_provider=provider)
    with oi.step("configured"):
        pass
    oi.configure()
    with oi.step("after_reset"):
        pass
    assert [s.name for s in exporter.get_finished_spans()] == ["step configured", "step configured"]  # + pending
    assert trace.get_tracer_provider() is global_before
