"""With no SDK configured the helpers run, return ids, enforce budgets and emit nothing — and say so once.

Runs in a fresh interpreter: OpenTelemetry's global provider can be set only once per process, and the tests
here must see it unset (then set late, to show the helpers pick it up).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from otel_agent.instrument._tracer import NO_SDK_WARNING

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN
import otel_agent.instrument as oi
from otel_agent.instrument import _tracer
from instrument_support import exercise_everything

out = {}
out["provider_is_proxy"] = type(trace.get_tracer_provider()).__name__
out["tracer"] = repr(_tracer.current_tracer())
ids = exercise_everything()
out["ids"] = {k: v for k, v in ids.items() if k != "carrier"}
out["carrier"] = ids["carrier"]
with oi.flow_run("w") as run, oi.provider_call("openai", "gpt-4o") as call:
    out["span_is_invalid"] = call.span is INVALID_SPAN and run.span is INVALID_SPAN
    out["current_span_invalid"] = not trace.get_current_span().get_span_context().is_valid
    call.set_usage(1, 2); call.set_cost(0.5); call.retry(); call.fallback(to_model="m2")
    out["recorded_input"] = call.record_input([{"role": "user"}])
out["cost"] = run.cost_usd
try:
    with oi.flow_run("w", max_tool_calls=0, enforce_budgets=True):
        with oi.tool_invocation("t"):
            pass
    out["enforced"] = False
except oi.BudgetExceededError:
    out["enforced"] = True

# A provider set later is picked up by the same (already imported) helpers.
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
with oi.step("late"):
    oi.claim("now recorded", confidence="low")
out["after_set"] = sorted(
    s.name for s in exporter.get_finished_spans() if s.attributes.get("logfire.span_type") != "pending_span"
)
print(json.dumps(out))
"""


def run_script(env_extra: dict[str, str] | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}  # lenient: OTEL_AGENT_STRICT unset
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(HERE)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    # exactly two log lines: "no SDK" once (however many helpers ran), and the one misuse exercise_everything makes
    lines = result.stderr.splitlines()
    assert lines[0] == NO_SDK_WARNING, result.stderr
    assert len(lines) == 2, lines
    assert "otel_agent.instrument misuse: confidence must be one of" in lines[1], lines
    return json.loads(result.stdout)


def test_no_sdk_helpers_run_emit_nothing_and_still_work() -> None:
    out = run_script()
    assert out["provider_is_proxy"] == "ProxyTracerProvider"
    assert out["tracer"] == "None"
    ids = out["ids"]
    assert ids["run"] == "run_demo"
    assert ids["source"] == "src_a"
    for key in ("step", "evidence", "artifact", "claim", "citation", "conflict", "decision", "badcase", "memory"):
        assert isinstance(ids[key], str), key
        assert ids[key], key
    assert len(ids["versions"]) == 2
    assert ids["versions"][0] != ids["versions"][1]
    # no traceparent without tracing, but the opaque ids still travel
    assert out["carrier"] == {
        "otel-agent-operation-id": ids["operation"],
        "otel-agent-handoff-id": ids["handoff"],
    }
    assert out["span_is_invalid"] is True
    assert out["current_span_invalid"] is True
    assert out["recorded_input"] is False
    assert out["cost"] == 0.5
    assert out["enforced"] is True
    assert out["after_set"] == ["otel_agent.claim", "step late"]


def test_capture_env_without_sdk_is_harmless() -> None:
    out = run_script({"OTEL_AGENT_CAPTURE_CONTENT": "true"})
    assert out["recorded_input"] is False
    assert out["tracer"] == "None"


def test_no_sdk_warning_is_not_given_for_a_provider_that_records_nothing_on_purpose() -> None:
    code = (
        "from opentelemetry import trace; from opentelemetry.trace import NoOpTracerProvider; "
        "trace.set_tracer_provider(NoOpTracerProvider()); import otel_agent.instrument as oi; "
        "print(oi.claim('c', confidence='low', claim_id='c1'))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "c1", "")


def test_flush_without_sdk_is_a_harmless_true() -> None:
    code = "import otel_agent.instrument as oi; print(oi.flush())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "True", "")
