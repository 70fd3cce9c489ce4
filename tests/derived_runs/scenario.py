"""Demo-like runs emitted with our own instrumentation helpers, with ids fixed so tests can assert exact rows.

``research_run``: four steps (plan / search / verify / synthesize) with a skill, five provider calls (one
priced from the span, one from the price table with a dated model name, one retried with a fallback, one
of a model the price table lacks, one failing), two tools (one failing), guards (one blocked), a failed
verifier, an artifact version and a handoff delegation; max_model_calls=4 is exceeded.
``failing_run``: a run whose only step raises.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent.instrument as oi

RUN_ID = "run_demo_research"
FAILING_RUN_ID = "run_demo_failing"


class ProviderTimeoutError(Exception):
    pass


def research_run(run_id: str = RUN_ID) -> None:
    with oi.flow_run("deep_research", run_id=run_id, max_model_calls=4, max_cost_usd=1.0, agent_name="research_agent"):
        with (
            oi.step("plan", step_id=f"{run_id}_plan"),
            oi.skill("research-planner", "1.0.0", invocation_id=f"{run_id}_planner"),
        ):
            with oi.provider_call("openai", "gpt-4o") as call:
                # 1000 input (400 of them cached) and 200 output tokens of gpt-4o, priced from the table:
                # (600 * 2.50 + 400 * 1.25 + 200 * 10.00) / 1e6 = 0.004
                call.set_usage(1000, 200, cache_read_input_tokens=400, reasoning_output_tokens=50)
                call.set_response(model="gpt-4o-2024-08-06", finish_reasons=["stop"])
            oi.guard_result("input.length", passed=True, stage="input")
        with oi.step("search", step_id=f"{run_id}_search"):
            with oi.provider_call("tavily", "search", operation="retrieval") as call:
                call.retry("timeout")
                call.fallback(to_provider="exa", reason="rate_limited")
                call.set_cost(0.002)
            with oi.tool_invocation("web_search", provider="tavily", call_id="call_search_1") as tool:
                tool.retry("timeout")
                tool.set_cost(0.001)
            oi.guard_result("budget.cost", passed=True, stage="budget")
        with oi.step("verify", step_id=f"{run_id}_verify"):
            with oi.provider_call("anthropic", "claude-3-5-sonnet-20241022") as call:
                call.set_usage(500, 100)  # (500 * 3 + 100 * 15) / 1e6 = 0.003
            oi.verifier_result("citation_coverage", passed=False, score=0.6, reason="coverage_insufficient")
            oi.guard_result("output.citation_required", passed=False, reason="uncited_claim", stage="output")
        with oi.step("synthesize", step_id=f"{run_id}_synthesize"):
            with oi.provider_call("openai", "house-model-7") as call:
                call.set_usage(10, 5)  # not in the price table: cost NULL, reason no_price
            try:
                with oi.provider_call("openai", "gpt-4o-mini"):
                    raise ProviderTimeoutError("upstream timed out")
            except ProviderTimeoutError:
                pass
            try:
                with oi.tool_invocation("python"):
                    raise ValueError("bad code")
            except ValueError:
                pass
            report = oi.create_artifact("Agent memory", artifact_type="markdown_report", artifact_id=f"{run_id}_art")
            report.add_version("# Agent memory\n- claim", version_id=f"{run_id}_v1")
            oi.delegate("fact_check_report", operation_id=f"{run_id}_op", target="fact_checker")


def failing_run(run_id: str = FAILING_RUN_ID) -> None:
    try:
        with oi.flow_run("quick_answer", run_id=run_id), oi.step("answer", step_id=f"{run_id}_answer"):
            raise RuntimeError("no answer")
    except RuntimeError:
        pass


def demo_spans(runs: Sequence[str] = (RUN_ID,), with_failing: bool = True) -> list[ReadableSpan]:
    """The spans of the demo runs, captured in memory (finished order)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with oi.use_tracer_provider(provider):
        for run_id in runs:
            research_run(run_id)
        if with_failing:
            failing_run()
    provider.shutdown()
    return list(exporter.get_finished_spans())
