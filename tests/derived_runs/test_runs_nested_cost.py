"""A call directly inside a call of the same category (two instrumentations of one request, a framework wrapper
and its inner call) records the same work twice: when both carry their own cost, the run, its step and the cost
breakdown count the outer one only (030_classified.sql ``nested_call``; 080_runs.sql, 070_steps_skills.sql and
100_cost_breakdown.sql ``NOT nested_call``). The costs are powers of two, so every sum is exact and a doubly
counted inner call shows as a different number, not a rounding difference (issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.derived_runs.runs_support import query, write_store

OUTER_CHAT, INNER_CHAT, INNERMOST_CHAT = 0.5, 0.25, 1 / 1024
SIBLING_CHAT = 0.125
OUTER_TOOL, INNER_TOOL = 0.0625, 0.03125
OUTER_RETRIEVAL, INNER_RETRIEVAL = 1 / 256, 1 / 512  # a retrieval is not billed, nested or not
BILLED = OUTER_CHAT + SIBLING_CHAT + OUTER_TOOL


def chat(name: str, cost: float) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 10,
        "otel_agent.cost.usd": cost,
        "test.name": name,
    }


def tool(name: str, cost: float) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "otel_agent.cost.usd": cost,
        "test.name": name,
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run (invoke_agent planner) with one step (invoke_agent researcher) holding: a chat wrapping a chat
    wrapping a chat, a sibling chat, a tool wrapping a tool, a retrieval wrapping a retrieval; each with its own
    cost."""
    out = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(out))
    tracer = provider.get_tracer("hand-built")

    def span(name: str, attributes: dict[str, Any]) -> Any:
        return tracer.start_as_current_span(name, attributes=attributes)

    with (
        span("invoke_agent planner", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"}),
        span("invoke_agent researcher", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"}),
    ):
        with (
            span("chat gpt-4o", chat("outer", OUTER_CHAT)),
            span("chat gpt-4o", chat("inner", INNER_CHAT)),
            span("chat gpt-4o", chat("innermost", INNERMOST_CHAT)),
        ):
            pass
        with span("chat gpt-4o", chat("sibling", SIBLING_CHAT)):
            pass
        with span("execute_tool search", tool("outer", OUTER_TOOL)), span("search impl", tool("inner", INNER_TOOL)):
            pass
        retrieval = {"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "kb"}
        with (
            span("retrieval kb", {**retrieval, "otel_agent.cost.usd": OUTER_RETRIEVAL}),
            span("retrieval kb inner", {**retrieval, "otel_agent.cost.usd": INNER_RETRIEVAL}),
        ):
            pass
    provider.shutdown()
    return write_store(tmp_path_factory.mktemp("nested") / "nested.duckdb", out.get_finished_spans())


def test_the_scenario_is_what_it_says(store: Path) -> None:
    """The inner calls are nested and each carries its own cost (else the cost assertions below prove nothing)."""
    spans = query(
        store,
        "SELECT r.category, s.attributes->>'$.\"test.name\"' AS name, r.nested_call, r.cost_usd, r.cost_source "
        "FROM run_spans r JOIN spans s USING (trace_id, span_id) "
        "WHERE r.category IN ('provider_call', 'tool_invocation', 'retrieval') ORDER BY ALL",
    )
    assert [tuple(r.values()) for r in spans] == [
        ("provider_call", "inner", True, INNER_CHAT, "span"),
        ("provider_call", "innermost", True, INNERMOST_CHAT, "span"),
        ("provider_call", "outer", False, OUTER_CHAT, "span"),
        ("provider_call", "sibling", False, SIBLING_CHAT, "span"),
        ("retrieval", None, False, OUTER_RETRIEVAL, "span"),
        ("retrieval", None, True, INNER_RETRIEVAL, "span"),
        ("tool_invocation", "inner", True, INNER_TOOL, "span"),
        ("tool_invocation", "outer", False, OUTER_TOOL, "span"),
    ]


def test_the_run_counts_the_outer_calls_only(store: Path) -> None:
    runs = query(
        store,
        "SELECT agent_name, steps, provider_calls, tool_invocations, retrievals, input_tokens, output_tokens, "
        "cost_usd, unpriced_calls FROM runs",
    )
    assert [tuple(r.values()) for r in runs] == [("planner", 1, 2, 1, 1, 200, 20, BILLED, 0)]


def test_the_step_counts_the_outer_calls_only(store: Path) -> None:
    steps = query(store, "SELECT step_name, provider_calls, tool_invocations, input_tokens, cost_usd FROM steps")
    assert [tuple(r.values()) for r in steps] == [("researcher", 2, 1, 200, BILLED)]


def test_the_cost_breakdown_counts_the_outer_calls_only(store: Path) -> None:
    rows = query(
        store,
        "SELECT step_name, item_type, provider, model, tool_name, calls, input_tokens, cost_usd, priced_calls "
        "FROM cost_breakdown ORDER BY item_type",
    )
    assert [tuple(r.values()) for r in rows] == [
        ("researcher", "provider_call", "openai", "gpt-4o", None, 2, 200, OUTER_CHAT + SIBLING_CHAT, 2),
        ("researcher", "tool_invocation", None, None, "search", 1, None, OUTER_TOOL, 1),
    ]
    (run,) = query(store, "SELECT cost_usd FROM runs")
    assert sum(r["cost_usd"] for r in rows) == run["cost_usd"] == BILLED


def test_the_call_views_list_the_outer_calls_only(store: Path) -> None:
    calls = query(store, "SELECT cost_usd FROM provider_calls ORDER BY cost_usd")
    assert [r["cost_usd"] for r in calls] == [SIBLING_CHAT, OUTER_CHAT]
    tools = query(store, "SELECT cost_usd FROM tool_invocations")
    assert [r["cost_usd"] for r in tools] == [OUTER_TOOL]


@pytest.mark.parametrize(
    ("budget", "exceeded"), [(OUTER_CHAT + INNER_CHAT, False), (OUTER_CHAT, False), (0.4375, True)]
)
def test_a_cost_budget_is_exceeded_only_above_it_and_by_the_outer_call(
    tmp_path: Path, budget: float, exceeded: bool
) -> None:
    """A run billed exactly its cost budget has not exceeded it (a mutate_sql.py survivor: `>` → `>=` in
    080_runs.sql), and a nested call's own cost does not count towards it."""
    out = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(out))
    tracer = provider.get_tracer("hand-built")
    root = {"gen_ai.operation.name": "invoke_agent", "otel_agent.run.budget.max_cost_usd": budget}
    with (
        tracer.start_as_current_span("invoke_agent planner", attributes=root),
        tracer.start_as_current_span("chat gpt-4o", attributes=chat("outer", OUTER_CHAT)),
        tracer.start_as_current_span("chat gpt-4o", attributes=chat("inner", INNER_CHAT)),
    ):
        pass
    provider.shutdown()
    path = write_store(tmp_path / "budget.duckdb", out.get_finished_spans())
    (run,) = query(path, "SELECT cost_usd, budget_max_cost_usd, budget_exceeded, budget_exceeded_limits FROM runs")
    assert run == {
        "cost_usd": OUTER_CHAT,
        "budget_max_cost_usd": budget,
        "budget_exceeded": exceeded,
        "budget_exceeded_limits": ["cost_usd"] if exceeded else [],
    }
