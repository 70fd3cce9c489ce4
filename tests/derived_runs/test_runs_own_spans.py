"""The run views over spans emitted by our own helpers (tests/derived_runs/scenario.py): exact rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.derived_runs.runs_support import query, write_store
from tests.derived_runs.scenario import FAILING_RUN_ID, RUN_ID, demo_spans

RUN = RUN_ID


def test_classification_of_every_span(demo_store: Path) -> None:
    rows = query(
        demo_store,
        "SELECT record_kind, category, convention, run_id_source, count(*) AS n FROM classified_spans "
        "WHERE run_id = ? GROUP BY ALL ORDER BY record_kind",
        [RUN],
    )
    assert [(r["record_kind"], r["category"], r["n"]) for r in rows] == [
        ("artifact", "record", 1),
        ("artifact_version", "record", 1),
        ("flow_run", "flow_run", 1),
        ("guard_result", "guard_result", 3),
        ("provider_call", "provider_call", 5),
        ("receipt_transition", "handoff", 1),
        ("skill_invocation", "skill_invocation", 1),
        ("step", "step", 4),
        ("tool_invocation", "tool_invocation", 2),
        ("verifier_result", "verifier_result", 1),
    ]
    assert {(r["convention"], r["run_id_source"]) for r in rows} == {("otel_agent", "attribute")}


def test_runs(demo_store: Path) -> None:
    rows = {r["run_id"]: r for r in query(demo_store, "SELECT * FROM runs")}
    assert set(rows) == {RUN, FAILING_RUN_ID}
    run = rows[RUN]
    expected = {
        "workflow_name": "deep_research",
        "agent_name": "research_agent",
        "convention": "otel_agent",
        "conventions": ["otel_agent"],
        "status": "ok",
        "error_type": None,
        "steps": 4,
        "skill_invocations": 1,
        "provider_calls": 5,
        "tool_invocations": 2,
        "retrievals": 0,
        "handoffs": 1,
        "guard_checks": 3,
        "guard_blocks": 1,
        "verifier_results": 1,
        "verifier_failures": 1,
        "errors": 2,
        "retries": 2,
        "fallbacks": 1,
        "input_tokens": 1510,
        "output_tokens": 305,
        "cache_read_tokens": 400,
        "reasoning_tokens": 50,
        "total_tokens": 1815,
        "unpriced_calls": 2,
        "budget_max_model_calls": 4,
        "budget_max_tool_calls": None,
        "budget_max_cost_usd": 1.0,
        "budget_exceeded": True,
        "budget_exceeded_limits": ["model_calls"],
        "span_count": 20,
    }
    assert {k: run[k] for k in expected} == expected
    assert run["cost_usd"] == pytest.approx(0.010)
    assert run["duration_ms"] > 0
    assert run["start_time"] < run["end_time"]
    assert run["run_span_id"]
    assert len(run["trace_id"]) == 32

    failing = rows[FAILING_RUN_ID]
    # one failure (the step raised, the run span ended in error with it): one error origin, two spans in error
    assert (
        failing["status"],
        failing["error_type"],
        failing["steps"],
        failing["errors"],
        failing["spans_in_error"],
    ) == ("error", "RuntimeError", 1, 1, 2)
    # nothing of the run has a known cost: NULL, as in steps (not 0.0)
    assert failing["budget_exceeded"] is None
    assert failing["cost_usd"] is None


def test_steps_and_skills(demo_store: Path) -> None:
    steps = query(
        demo_store,
        "SELECT step_id, step_name, parent_step_id, status_code, skill_invocations, provider_calls, "
        "tool_invocations, guard_blocks, verifier_failures, errors, input_tokens, output_tokens, "
        "round(cost_usd, 6) AS cost_usd FROM steps WHERE run_id = ? ORDER BY start_time",
        [RUN],
    )
    assert [tuple(r.values()) for r in steps] == [
        (f"{RUN}_plan", "plan", None, "UNSET", 1, 1, 0, 0, 0, 0, 1000, 200, 0.004),
        (f"{RUN}_search", "search", None, "UNSET", 0, 1, 1, 0, 0, 0, None, None, 0.003),
        (f"{RUN}_verify", "verify", None, "UNSET", 0, 1, 0, 1, 1, 0, 500, 100, 0.003),
        (f"{RUN}_synthesize", "synthesize", None, "UNSET", 0, 2, 1, 0, 0, 2, 10, 5, None),
    ]
    skills = query(demo_store, "SELECT * FROM skill_invocations")
    assert len(skills) == 1
    s = skills[0]
    assert (s["run_id"], s["step_id"], s["skill_invocation_id"], s["skill_ref"]) == (
        RUN,
        f"{RUN}_plan",
        f"{RUN}_planner",
        "research-planner@1.0.0",
    )
    assert (s["provider_calls"], s["tool_invocations"], s["input_tokens"], s["output_tokens"]) == (1, 0, 1000, 200)
    assert s["cost_usd"] == pytest.approx(0.004)


def test_provider_calls_cost_and_fallback(demo_store: Path) -> None:
    rows = query(
        demo_store,
        "SELECT step_id, skill_invocation_id, provider, request_model, response_model, input_tokens, "
        "output_tokens, cache_read_tokens, reasoning_tokens, round(cost_usd, 9) AS cost_usd, cost_source, "
        "cost_missing_reason, price_model_pattern, retries, fallbacks, fallback_from_provider, "
        "fallback_to_provider, is_error, error_type FROM provider_calls WHERE run_id = ? ORDER BY start_time",
        [RUN],
    )
    assert [tuple(r.values()) for r in rows] == [
        (f"{RUN}_plan", f"{RUN}_planner", "openai", "gpt-4o", "gpt-4o-2024-08-06", 1000, 200, 400, 50,
         0.004, "price_table", None, "gpt-4o", 0, 0, None, None, False, None),
        (f"{RUN}_search", None, "exa", "search", None, None, None, None, None,
         0.002, "span", None, None, 1, 1, "tavily", "exa", False, None),
        (f"{RUN}_verify", None, "anthropic", "claude-3-5-sonnet-20241022", None, 500, 100, None, None,
         0.003, "price_table", None, "claude-3-5-sonnet", 0, 0, None, None, False, None),
        (f"{RUN}_synthesize", None, "openai", "house-model-7", None, 10, 5, None, None,
         None, None, "no_price", None, 0, 0, None, None, False, None),
        (f"{RUN}_synthesize", None, "openai", "gpt-4o-mini", None, None, None, None, None,
         None, None, "no_usage", None, 0, 0, None, None, True, "ProviderTimeoutError"),
    ]  # fmt: skip


def test_tools_guards_verifiers(demo_store: Path) -> None:
    tools = query(
        demo_store,
        "SELECT step_id, tool_name, tool_provider, tool_call_id, retries, cost_usd, cost_source, is_error, "
        "error_type FROM tool_invocations ORDER BY start_time",
    )
    assert [tuple(r.values()) for r in tools] == [
        (f"{RUN}_search", "web_search", "tavily", "call_search_1", 1, 0.001, "span", False, None),
        (f"{RUN}_synthesize", "python", None, None, 0, None, None, True, "ValueError"),
    ]
    guards = query(
        demo_store,
        "SELECT step_id, skill_invocation_id, guard_name, stage, outcome, blocked, reason FROM guard_results "
        "ORDER BY time",
    )
    assert [tuple(r.values()) for r in guards] == [
        (f"{RUN}_plan", f"{RUN}_planner", "input.length", "input", "passed", False, None),
        (f"{RUN}_search", None, "budget.cost", "budget", "passed", False, None),
        (f"{RUN}_verify", None, "output.citation_required", "output", "blocked", True, "uncited_claim"),
    ]
    verifiers = query(demo_store, "SELECT step_id, verifier_name, outcome, passed, score, reason FROM verifier_results")
    assert [tuple(r.values()) for r in verifiers] == [
        (f"{RUN}_verify", "citation_coverage", "failed", False, 0.6, "coverage_insufficient")
    ]


def test_hierarchy_walks_with_joins(demo_store: Path) -> None:
    """run -> step -> skill -> provider call -> (guard) by ids alone."""
    rows = query(
        demo_store,
        "SELECT r.workflow_name, s.step_name, k.skill_ref, p.request_model, g.guard_name "
        "FROM runs r JOIN steps s USING (run_id) "
        "JOIN skill_invocations k ON k.run_id = s.run_id AND k.step_id = s.step_id "
        "JOIN provider_calls p ON p.run_id = k.run_id AND p.skill_invocation_id = k.skill_invocation_id "
        "JOIN guard_results g ON g.run_id = k.run_id AND g.skill_invocation_id = k.skill_invocation_id",
    )
    assert [tuple(r.values()) for r in rows] == [
        ("deep_research", "plan", "research-planner@1.0.0", "gpt-4o", "input.length")
    ]


def test_run_metrics_long_form(demo_store: Path) -> None:
    rows = {r["metric"]: r["value"] for r in query(demo_store, "SELECT * FROM run_metrics WHERE run_id = ?", [RUN])}
    for metric in (
        "cost.total_usd",
        "usage.provider_calls",
        "usage.tool_invocations",
        "usage.skill_invocations",
        "usage.tokens.input",
        "usage.tokens.output",
        "reliability.guard_blocks",
        "reliability.retry_count",
        "reliability.fallback_count",
        "reliability.errors",
        "latency.total_ms",
        "latency.provider_p50_ms",
        "latency.provider_p95_ms",
    ):
        assert metric in rows, metric
    assert rows["cost.total_usd"] == pytest.approx(0.010)
    exact = {k: rows[k] for k in rows if k.startswith(("usage.", "reliability."))}
    assert exact == {
        "usage.steps": 4.0,
        "usage.provider_calls": 5.0,
        "usage.tool_invocations": 2.0,
        "usage.skill_invocations": 1.0,
        "usage.tokens.input": 1510.0,
        "usage.tokens.output": 305.0,
        "usage.tokens.cache_read": 400.0,
        "usage.tokens.reasoning": 50.0,
        "reliability.guard_blocks": 1.0,
        "reliability.retry_count": 2.0,
        "reliability.fallback_count": 1.0,
        "reliability.errors": 2.0,
        "reliability.verifier_failures": 1.0,
    }
    assert 0 < rows["latency.provider_p50_ms"] <= rows["latency.provider_p95_ms"] < rows["latency.total_ms"]


def test_cost_breakdown(demo_store: Path) -> None:
    rows = query(
        demo_store,
        "SELECT step_name, skill_ref, item_type, provider, model, tool_name, calls, round(cost_usd, 9) AS cost, "
        "priced_calls, unpriced_calls, cost_sources FROM cost_breakdown WHERE run_id = ? "
        "ORDER BY step_name, item_type, model, tool_name",
        [RUN],
    )
    assert [tuple(r.values()) for r in rows] == [
        ("plan", "research-planner@1.0.0", "provider_call", "openai", "gpt-4o", None, 1, 0.004, 1, 0,
         ["price_table"]),
        ("search", None, "provider_call", "exa", "search", None, 1, 0.002, 1, 0, ["span"]),
        ("search", None, "tool_invocation", "tavily", None, "web_search", 1, 0.001, 1, 0, ["span"]),
        # nothing priced in these groups: cost NULL (not 0.0)
        ("synthesize", None, "provider_call", "openai", "gpt-4o-mini", None, 1, None, 0, 1, []),
        ("synthesize", None, "provider_call", "openai", "house-model-7", None, 1, None, 0, 1, []),
        ("synthesize", None, "tool_invocation", None, None, "python", 1, None, 0, 1, []),
        ("verify", None, "provider_call", "anthropic", "claude-3-5-sonnet-20241022", None, 1, 0.003, 1, 0,
         ["price_table"]),
    ]  # fmt: skip
    total = query(demo_store, "SELECT sum(cost_usd) AS c FROM cost_breakdown WHERE run_id = ?", [RUN])[0]["c"]
    assert total == pytest.approx(0.010)


def test_health_views(demo_store: Path) -> None:
    health = {(r["provider"], r["model"]): r for r in query(demo_store, "SELECT * FROM provider_health")}
    assert set(health) == {
        ("openai", "gpt-4o"),
        ("openai", "gpt-4o-mini"),
        ("openai", "house-model-7"),
        ("anthropic", "claude-3-5-sonnet-20241022"),
        ("exa", "search"),
        ("tavily", "search"),
    }
    mini = health[("openai", "gpt-4o-mini")]
    assert (mini["calls"], mini["errors"], mini["error_rate"]) == (1, 1, 1.0)
    exa, tavily = health[("exa", "search")], health[("tavily", "search")]
    assert (exa["calls"], exa["retries"], exa["fallbacks_in"], exa["fallbacks_out"]) == (1, 1, 1, 0)
    assert (tavily["calls"], tavily["fallbacks_out"], tavily["p50_latency_ms"]) == (0, 1, None)
    assert health[("openai", "gpt-4o")]["p50_latency_ms"] > 0

    tools = {r["tool_name"]: r for r in query(demo_store, "SELECT * FROM tool_usage")}
    assert (tools["web_search"]["calls"], tools["web_search"]["retries"], tools["web_search"]["cost_usd"]) == (
        1,
        1,
        0.001,
    )
    assert (tools["python"]["errors"], tools["python"]["error_rate"]) == (1, 1.0)
    skills = query(demo_store, "SELECT skill_ref, invocations, errors FROM skill_health")
    assert [tuple(r.values()) for r in skills] == [("research-planner@1.0.0", 1, 0)]


def test_health_time_windows(demo_store: Path) -> None:
    t_min, t_max = query(demo_store, "SELECT min(start_time) AS a, max(end_time) AS b FROM spans")[0].values()
    everything = query(demo_store, "SELECT sum(calls) AS n FROM provider_health_between(?, ?)", [t_min, t_max])
    assert everything[0]["n"] == 5
    nothing = query(demo_store, "SELECT count(*) AS n FROM provider_health_between(?, ?)", [t_max, None])
    assert nothing[0]["n"] == 0
    before = query(demo_store, "SELECT count(*) AS n FROM tool_usage_between(?, ?)", [None, t_min])
    assert before[0]["n"] == 0
    assert query(demo_store, "SELECT sum(invocations) AS n FROM skill_health_between(NULL, NULL)")[0]["n"] == 1


def test_run_timeline(demo_store: Path) -> None:
    rows = query(
        demo_store, "SELECT seq, event, subject, detail FROM run_timeline WHERE run_id = ? ORDER BY seq", [RUN]
    )
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    events = [(r["event"], r["subject"]) for r in rows]
    assert events == [
        ("run.started", "deep_research"),
        ("step.started", "plan"),
        ("step.succeeded", "plan"),
        ("step.started", "search"),
        ("proxy_fallback", "tavily/search -> exa/search"),
        ("step.succeeded", "search"),
        ("step.started", "verify"),
        ("verifier.failed", "citation_coverage"),
        ("guard.blocked", "output.citation_required"),
        ("step.succeeded", "verify"),
        ("step.started", "synthesize"),
        ("budget.exceeded", "model_calls"),
        ("artifact.created", f"{RUN}_art"),  # seed 000's recordEvent type, then the version
        ("artifact.version_created", f"{RUN}_art"),
        ("handoff.delegated", "fact_checker"),
        ("step.succeeded", "synthesize"),
        ("run.succeeded", "deep_research"),
    ]
    failing = query(demo_store, "SELECT event FROM run_timeline WHERE run_id = ? ORDER BY seq", [FAILING_RUN_ID])
    assert [r["event"] for r in failing] == ["run.started", "step.started", "step.failed", "run.failed"]


@pytest.mark.parametrize(
    ("view", "macro"),
    [
        ("classified_spans", "classified_spans_for_run"),
        ("steps", "steps_for_run"),
        ("skill_invocations", "skill_invocations_for_run"),
        ("provider_calls", "provider_calls_for_run"),
        ("tool_invocations", "tool_invocations_for_run"),
        ("guard_results", "guard_results_for_run"),
        ("verifier_results", "verifier_results_for_run"),
        ("runs", "runs_for_run"),
        ("run_metrics", "run_metrics_for_run"),
        ("cost_breakdown", "cost_breakdown_for_run"),
        ("run_timeline", "run_timeline_for_run"),
    ],
)
def test_per_run_macros_equal_the_views(demo_store: Path, view: str, macro: str) -> None:
    for run_id in (RUN, FAILING_RUN_ID):
        from_view = query(demo_store, f"SELECT * FROM {view} WHERE run_id = ? ORDER BY ALL", [run_id])
        from_macro = query(demo_store, f"SELECT * FROM {macro}(?) ORDER BY ALL", [run_id])
        assert from_macro == from_view
    assert query(demo_store, f"SELECT count(*) AS n FROM {macro}(?)", ["run_none"])[0]["n"] == 0


def test_running_run_without_its_flow_run_span(tmp_path: Path) -> None:
    """While a run is still going its flow_run span is not exported yet: the run shows as running."""
    spans = [s for s in demo_spans(with_failing=False) if s.name != "invoke_workflow deep_research"]
    path = write_store(tmp_path / "partial.duckdb", spans)
    run = query(path, "SELECT * FROM runs")[0]
    assert (run["run_id"], run["status"], run["run_span_id"], run["steps"], run["provider_calls"]) == (
        RUN,
        "running",
        None,
        4,
        5,
    )
    assert run["budget_exceeded"] is None
