"""Runs in progress (issue 36 §1; docs/views-runs.md "Runs in progress"), through a real receiver: our helpers
announce a run and its steps with pending spans, so a run is listed as ``running`` (with its current step) before
its span ends; a third party's Logfire-shaped pending span, and a trace whose root has not arrived, make a running
run too; a running run silent past ``--run-silence-s`` is ``abandoned``. Every answer is checked both ways:
maintained rows and the query-time SQL (the differential check)."""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_agent.instrument as oi
from otel_agent.store.database import set_run_silence
from tests.maintained_support import T0, assert_same_runs, post, span, trace_request, wait_maintained

PENDING = {"logfire.span_type": "pending_span"}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.usage.input_tokens": 100,
    "gen_ai.usage.output_tokens": 20,
}


def runs_now(receiver: Any) -> dict[str, dict[str, Any]]:
    """Every run, once the maintained state has folded what is stored, equal both ways."""
    wait_maintained(f"http://127.0.0.1:{receiver.http_port}", receiver.con)
    return {r["run_id"]: r for r in assert_same_runs(receiver.con)}


def at(spans: list[dict[str, Any]], seconds_ago: float) -> list[dict[str, Any]]:
    """The spans moved so that the latest of their times is ``seconds_ago`` before now."""
    latest = max(max(s["start"], s["end"]) for s in spans)
    shift = time.time_ns() - int(seconds_ago * 1e9) - latest
    return [{**s, "start": s["start"] + shift, "end": s["end"] + shift} for s in spans]


def timeline(receiver: Any, run_id: str) -> list[tuple[str, str]]:
    sql = "SELECT event, subject FROM run_timeline_for_run(?) ORDER BY seq"
    return [tuple(r) for r in receiver.con.execute(sql, [run_id]).fetchall()]


def test_our_run_is_listed_running_with_its_step_before_its_span_ends(make_receiver: Any) -> None:
    receiver = make_receiver()
    provider = TracerProvider(resource=Resource.create({"service.name": "researcher"}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{receiver.http_port}/v1/traces"))
    )
    with oi.flow_run("deep_research", tracer_provider=provider) as run:
        with oi.step("plan"):
            pass
        with oi.step("search"):
            # the run's span and this step's have not ended: only their announcements are stored
            during = runs_now(receiver)[run.run_id]
            stored = receiver.con.execute(
                "SELECT count(*) FROM spans WHERE attributes->>'logfire.span_type' = 'pending_span'"
            ).fetchall()[0][0]
            timeline_during = timeline(receiver, run.run_id)
    after = runs_now(receiver)[run.run_id]
    provider.shutdown()

    assert stored == 3  # the run, plan, search announced
    assert (during["status"], during["current_step"], during["workflow_name"]) == (
        "running",
        "step search",
        "deep_research",
    )
    assert during["steps"] == 2  # plan ended, search in progress: both steps of the run
    assert during["last_activity_time"] is not None
    assert during["end_time"] == during["last_activity_time"]  # the run span in progress ends so far there
    assert (after["status"], after["current_step"], after["steps"]) == ("ok", None, 2)
    assert after["end_time"] >= after["last_activity_time"] >= during["last_activity_time"]
    # the announcements are not spans of the run: the run span and its two steps
    assert after["span_count"] == 3
    # the timeline says no outcome for what has not ended: the run and step search started, plan succeeded
    assert timeline_during == [
        ("run.started", "deep_research"), ("step.started", "plan"), ("step.succeeded", "plan"),
        ("step.started", "search"),
    ]  # fmt: skip
    assert timeline(receiver, run.run_id)[-2:] == [("step.succeeded", "search"), ("run.succeeded", "deep_research")]


def test_a_third_partys_pending_root_makes_a_running_run_until_the_root_arrives(make_receiver: Any) -> None:
    receiver = make_receiver()
    base = f"http://127.0.0.1:{receiver.http_port}"
    root = span(1, 1, None, "invoke_agent support", AGENT, start=0, end=9_000_000)
    pending = span(1, 99, 1, "invoke_agent support", {**AGENT, **PENDING, "logfire.pending_parent_id": "0" * 16})
    pending["end"] = pending["start"]
    call = span(1, 2, 1, "chat gpt-4o", CHAT, start=1_000_000, end=3_000_000)
    spans = at([root, pending, call], seconds_ago=2)
    run_id = f"{1:032x}"

    post(base, trace_request(spans[1:]))  # the announcement and the call: the agent span has not ended
    running = runs_now(receiver)[run_id]
    post(base, trace_request(spans[:1]))  # then it ends
    ended = runs_now(receiver)[run_id]

    assert (running["status"], running["agent_name"], running["provider_calls"], running["span_count"]) == (
        "running",
        "support",
        1,
        2,
    )
    assert running["input_tokens"] == 100
    assert (ended["status"], ended["provider_calls"], ended["span_count"], ended["run_span_id"]) == (
        "ok",
        1,
        2,
        f"{1001:016x}",
    )
    # a call in progress is not counted by provider health; the ended one is, once
    calls = receiver.con.execute("SELECT sum(calls) FROM provider_health").fetchall()[0][0]
    assert calls == 1


def test_a_trace_whose_root_has_not_arrived_is_running_then_abandoned_after_the_silence(
    make_receiver: Any,
) -> None:
    receiver = make_receiver(run_silence_s=60)
    base = f"http://127.0.0.1:{receiver.http_port}"
    # two traces whose agent root (span 1) is not stored: their calls point at it
    recent = at([span(2, 2, 1, "chat gpt-4o", CHAT, start=0, end=2_000_000)], seconds_ago=5)
    silent = at([span(3, 2, 1, "chat gpt-4o", CHAT, start=0, end=2_000_000)], seconds_ago=300)
    # and a finished one, long ago: finished runs never turn abandoned
    done = [
        span(4, 1, None, "invoke_agent support", AGENT, start=0, end=5_000_000),
        span(4, 2, 1, "chat gpt-4o", CHAT, start=1_000_000, end=2_000_000),
    ]
    post(base, trace_request(recent + silent + done))
    runs = runs_now(receiver)

    assert runs[f"{2:032x}"]["status"] == "running"
    assert runs[f"{3:032x}"]["status"] == "abandoned"
    assert runs[f"{4:032x}"]["status"] == "ok"
    assert done[0]["start"] == T0 + 4 * 10_000_000  # (the finished run is months old)
    # the same store read with the default silence (600 s): the 300-s-silent run is running again
    set_run_silence(receiver.con, 600)
    assert {r["run_id"]: r["status"] for r in assert_same_runs(receiver.con)}[f"{3:032x}"] == "running"
