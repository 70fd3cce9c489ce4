"""The maintained runs (store/maintained.py) against the query-time SQL, through a real receiver: any arrival
order, re-delivery, late roots, runs across traces, context-less exception records, retention's deletes, a
restart after kill -9, a rebuild after the derived SQL changed, and a store migrated from schema version 4."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
import requests

from otel_agent import DuckDBSpanExporter
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor, load_rules
from otel_agent.ingest.writer import Writer
from otel_agent.read.runs import scope_run
from otel_agent.read.source import CursorSource
from otel_agent.store.database import open_store, store_cursor
from otel_agent.store.maintained import FINGERPRINT_KEY, reads_maintained_runs
from otel_agent.store.shards import open_read_only
from otel_agent.store.statements import statement
from tests.conftest import free_port, rows
from tests.maintained_support import (
    T0,
    assert_same_run_views,
    assert_same_runs,
    exception_log_request,
    post,
    span,
    stored_seq,
    trace_request,
    wait_maintained,
)

OURS = {"otel_agent.record.kind": "flow_run", "otel_agent.run.id": "run-x"}


def receipt(transition: str, target: str) -> dict[str, Any]:
    return {
        "otel_agent.record.kind": "receipt_transition",
        "otel_agent.receipt.operation_id": "op-1",
        "otel_agent.receipt.handoff_id": "h-1",
        "otel_agent.receipt.transition": transition,
        "otel_agent.receipt.target": target,
    }


def chat(model: str, tokens: int, **extra: Any) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": tokens,
        "gen_ai.usage.output_tokens": tokens // 10,
        **extra,
    }


def scenario_spans() -> list[dict[str, Any]]:
    """Spans of several conventions whose run rows depend on other spans: a run across two traces (ours), a
    GenAI agent run with a nested call of the same category carrying its own cost, a failure that propagates
    through an agent span in OK, an OpenInference run, a trace with two roots, and small GenAI runs."""
    out = [
        # ours: run-x across traces 1 (the flow run) and 2 (a step in another process)
        span(1, 0, None, "deep_research", {**OURS, "gen_ai.workflow.name": "deep_research"}, end=9_000_000),
        span(
            1,
            1,
            0,
            "chat gpt-4o",
            {"otel_agent.record.kind": "provider_call", "otel_agent.run.id": "run-x", **chat("gpt-4o", 1000)},
            start=1000,
        ),
        span(
            2,
            0,
            None,
            "verify",
            {"otel_agent.record.kind": "step", "otel_agent.run.id": "run-x", "otel_agent.step.id": "run-x_verify"},
            start=2_000_000,
        ),
        span(
            2,
            1,
            0,
            "chat claude",
            {
                "otel_agent.record.kind": "provider_call",
                "otel_agent.run.id": "run-x",
                "otel_agent.step.id": "run-x_verify",
                **chat("claude-3-5-sonnet-20241022", 500),
            },
            start=2_100_000,
            error="timeout",
            exception="TimeoutError",
        ),
        # GenAI: an agent run whose call wraps another instrumentation's call of the same request, both priced
        span(
            3,
            0,
            None,
            "invoke_agent planner",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
            end=8_000_000,
        ),
        span(
            3,
            1,
            0,
            "chat gpt-4o",
            chat("gpt-4o", 300, **{"gen_ai.usage.cost": 0.5, "gen_ai.response.id": "resp-3"}),
            start=1000,
        ),
        span(3, 2, 1, "chat gpt-4o", chat("gpt-4o", 300, **{"gen_ai.usage.cost": 0.5}), start=2000),
        span(
            3,
            3,
            0,
            "execute_tool search",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
            start=3_000_000,
        ),
        # one failure through an agent span in OK
        span(
            4,
            0,
            None,
            "invoke_agent triage",
            {"gen_ai.operation.name": "invoke_agent", "error.type": "RunError", "gen_ai.agent.name": "triage"},
            end=8_000_000,
            error="run failed",
        ),
        span(
            4,
            1,
            0,
            "invoke_agent helper",
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
            start=1000,
            end=7_000_000,
        ),
        span(
            4,
            2,
            1,
            "chat gpt-4o-mini",
            chat("gpt-4o-mini", 50),
            start=2000,
            error="rate limited",
            exception="RateLimitError",
        ),
        # OpenInference
        span(5, 0, None, "Agent.run", {"openinference.span.kind": "AGENT", "agent.name": "oi"}, end=8_000_000),
        span(
            5,
            1,
            0,
            "llm",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.provider": "openai",
                "llm.token_count.prompt": 70,
                "llm.token_count.completion": 7,
            },
            start=1000,
        ),
        span(5, 2, 0, "tool", {"openinference.span.kind": "TOOL", "tool.name": "calc"}, start=2_000_000),
        # health facts: a tool span inside a tool span (one invocation), a skill, a call that fell back
        span(5, 3, 2, "tool", {"openinference.span.kind": "TOOL", "tool.name": "calc"}, start=2_100_000),
        span(
            7,
            0,
            None,
            "summarise",
            {
                "otel_agent.record.kind": "skill_invocation",
                "otel_agent.skill.name": "summarise",
                "otel_agent.skill.version": "2",
            },
            end=8_000_000,
            error="failed",
        ),
        span(
            7,
            1,
            0,
            "chat gpt-4o",
            chat("gpt-4o", 40, **{"otel_agent.retry.count": 2}),
            start=1000,
            events=[
                (
                    "otel_agent.fallback",
                    {
                        "otel_agent.fallback.from_provider": "Anthropic",
                        "otel_agent.fallback.from_model": "claude",
                        "otel_agent.fallback.to_provider": "openai",
                        "otel_agent.fallback.to_model": "gpt-4o",
                    },
                )
            ],
        ),
        # a proxy request inside that call (the same request, recorded by the proxy), with a fallback of its own
        span(
            7,
            6,
            1,
            "chat gpt-4o",
            {
                "otel_agent.record.kind": "proxy_request",
                "otel_agent.proxy.client": "team-a",
                **chat("gpt-4o", 40),
            },
            start=1500,
            events=[
                (
                    "otel_agent.fallback",
                    {
                        "otel_agent.fallback.from_provider": "openai",
                        "otel_agent.fallback.from_model": "gpt-4o-mini",
                        "otel_agent.fallback.to_provider": "openai",
                        "otel_agent.fallback.to_model": "gpt-4o",
                    },
                )
            ],
        ),
        # receipts: two transitions of ours, an A2A task's span, a framework handoff span
        span(7, 2, 0, "otel_agent.receipt.delegated", receipt("delegated", "worker"), start=2_000_000),
        span(7, 3, 0, "otel_agent.receipt.accepted", receipt("accepted", "worker"), start=3_000_000),
        span(7, 4, 0, "a2a send", {"a2a.task.id": "task-9", "a2a.task.state": "working"}, start=4_000_000),
        span(7, 5, 0, "handoff", {"gen_ai.operation.name": "handoff", "gen_ai.handoff.to_agent": "x"}, start=5_000_000),
        # two roots (the parent of the second was never sent)
        span(6, 0, None, "chat a", chat("gpt-4o", 10), start=0),
        span(6, 1, 99, "chat b", chat("gpt-4o", 20), start=1_000_000),
    ]
    for t in range(10, 40):
        out.append(
            span(
                t,
                0,
                None,
                f"invoke_agent a{t % 4}",
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"a{t % 4}"},
                end=9_000_000,
                error="run status: error" if t % 7 == 0 else None,
            )
        )
        for k in range(1, 4):
            out.append(
                span(
                    t,
                    k,
                    0,
                    "chat gpt-4o",
                    chat("gpt-4o", 100 * k, **{"gen_ai.response.id": f"r{t}-{k}"}),
                    start=k * 1000,
                )
            )
    return out


def send_in_random_order(base: str, spans: list[dict[str, Any]], seed: int, con: Any) -> None:
    """Requests of 1-9 spans in a random order, a third of them sent twice, roots held back to the end for some
    traces; the maintained runs are compared with the query-time ones halfway too (a partial store)."""
    rnd = random.Random(seed)
    late = {s["trace_id"] for s in spans if not s["parent_span_id"] and rnd.random() < 0.4}
    first = [s for s in spans if not (not s["parent_span_id"] and s["trace_id"] in late)]
    last = [s for s in spans if not s["parent_span_id"] and s["trace_id"] in late]
    rnd.shuffle(first)
    chunks, i = [], 0
    while i < len(first):
        n = rnd.randint(1, 9)
        chunks.append(first[i : i + n])
        i += n
    chunks.append(last)
    for n, chunk in enumerate(chunks):
        post(base, trace_request(chunk))
        if rnd.random() < 0.33:
            post(base, trace_request(chunk))
        if n == len(chunks) // 2:
            wait_maintained(base, con)
            assert_same_runs(con)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_arrival_order_gives_the_query_time_runs(make_receiver: Any, seed: int) -> None:
    receiver = make_receiver()
    base = f"http://127.0.0.1:{receiver.http_port}"
    send_in_random_order(base, scenario_spans(), seed, receiver.con)
    # a context-less exception record naming run 3's outer call: the call (and its run) count an error
    post(base, exception_log_request("resp-3", T0 + 3 * 10_000_000 + 5000))
    derived = wait_maintained(base, receiver.con)
    runs = {r["run_id"]: r for r in assert_same_runs(receiver.con)}
    assert derived["ready"]
    assert derived["backlog_rows"] == 0
    # the view really reads the maintained rows, and they are the answers the scenario was built for
    assert rows(receiver, "SELECT count(*) FROM run_summary")[0][0] == len(runs) == 36
    assert "run_summary" in rows(receiver, "SELECT sql FROM duckdb_views() WHERE view_name = 'runs'")[0][0]
    x = runs["run-x"]
    assert (x["provider_calls"], x["errors"], x["input_tokens"]) == (2, 1, 1500)
    planner = runs[f"{3:032x}"]
    assert (planner["provider_calls"], planner["cost_usd"], planner["errors"]) == (1, 0.5, 1)
    assert runs[f"{4:032x}"]["error_type"] == "RunError"
    assert runs[f"{6:032x}"]["provider_calls"] == 2
    # the health views read the maintained facts, and count what the scenario holds
    assert rows(receiver, "SELECT count(*) FROM health_facts WHERE kind = 'fallback'")[0][0] == 2
    providers = {(r[0], r[1]): r for r in rows(receiver, "SELECT * FROM provider_health")}
    assert providers[("anthropic", "claude")][6] == 1  # fallbacks_out
    assert providers[("openai", "gpt-4o")][7] == 2  # fallbacks_in
    proxy = rows(receiver, "SELECT client, requests, fallbacks_in FROM proxy_health WHERE requests > 0")
    assert proxy == [("team-a", 1, 1)]
    assert rows(receiver, "SELECT skill_ref, invocations, errors FROM skill_health") == [("summarise@2", 1, 1)]
    tools = dict(rows(receiver, "SELECT tool_name, calls FROM tool_usage"))
    assert tools == {"search": 1, "calc": 1}  # the tool span inside a tool span is the same invocation
    # the receipt views read the maintained candidates: ours, the A2A task's and the handoff span's transitions
    assert rows(receiver, "SELECT count(*) FROM receipt_candidates")[0][0] == 4
    states = dict(rows(receiver, "SELECT operation_id, current_attempt_state FROM receipt_state"))
    assert set(states) == {"op-1", "task-9", f"handoff:{7:032x}:{7005:016x}"}
    # one run's views read its spans through the state too (the run page): the same rows as a scan by id,
    # also for a run with a span the state has not folded yet
    post(base, trace_request([span(3, 9, 0, "chat late", chat("gpt-4o", 1))]))
    assert_same_run_views(receiver.con, ["run-x", f"{3:032x}", f"{4:032x}", f"{6:032x}", f"{11:032x}"])
    # the console's run page scope copies the context-less record that names run 3's call (an hour around the run)
    with store_cursor(receiver.con) as cur:
        q = CursorSource(cur)
        scope_run(q, f"{3:032x}")
        assert q.one("run_summary", {"run_id": f"{3:032x}"})["errors"] == 1


def serve(db: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    http, grpc = free_port(), free_port()
    cmd = [
        sys.executable,
        "-m",
        "otel_agent",
        "serve",
        "--db",
        str(db),
        "--http-endpoint",
        f"127.0.0.1:{http}",
        "--grpc-endpoint",
        f"127.0.0.1:{grpc}",
        *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{http}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(base + "/healthz", timeout=2).status_code == 200:
                return proc, base
        except requests.ConnectionError:
            pass
        assert proc.poll() is None, "the receiver exited"
        assert time.monotonic() < deadline, "the receiver did not start"
        time.sleep(0.1)


def kill(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


class _Con:
    """A store connection the support helpers can read through, opened on the file once no receiver holds it."""

    def __init__(self, path: Path) -> None:
        self.con = open_store(path)


def test_kill_9_at_any_point_then_restart_catches_up(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    spans = scenario_spans()
    rnd = random.Random(9)
    rnd.shuffle(spans)
    for part in (spans[: len(spans) // 3], spans[len(spans) // 3 : 2 * len(spans) // 3]):
        proc, base = serve(db)
        for i in range(0, len(part), 5):
            post(base, trace_request(part[i : i + 5]))
        time.sleep(rnd.uniform(0, 1.5))  # the kill lands before, during or after a maintenance step
        kill(proc)
    proc, base = serve(db)
    try:
        rest = spans[2 * len(spans) // 3 :]
        for i in range(0, len(rest), 5):
            post(base, trace_request(rest[i : i + 5]))
        health = requests.get(base + "/healthz", timeout=10).json()
        deadline = time.monotonic() + 120
        while not (health["derived"]["ready"] and health["derived"]["seq"] >= health["ingest_seq"]):
            assert time.monotonic() < deadline, health["derived"]
            time.sleep(0.1)
            health = requests.get(base + "/healthz", timeout=10).json()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    store = _Con(db)
    try:
        runs = assert_same_runs(store.con)
        assert len(runs) == 36
        assert reads_maintained_runs(store.con)
    finally:
        store.con.close()


def test_retention_deletes_give_the_query_time_runs(make_receiver: Any) -> None:
    """Spans of May 2026 fall past a one-day horizon and are deleted in steps; traces that straddle it keep
    their newer spans. The runs of what remains are what the query-time SQL gives."""
    receiver = make_receiver(retention="1d")
    base = f"http://127.0.0.1:{receiver.http_port}"
    now = time.time_ns()
    old = scenario_spans()
    recent = []
    for s in scenario_spans():  # the same shapes, now: a second copy of every trace under other ids
        s = dict(s, trace_id=(int.from_bytes(s["trace_id"], "big") + 1000).to_bytes(16, "big"))
        shift = now - T0 - 20_000_000_000
        recent.append(dict(s, start=s["start"] + shift, end=s["end"] + shift))
    straddle = [
        dict(s, start=s["start"] + (now - T0 - 20_000_000_000), end=s["end"] + (now - T0 - 20_000_000_000))
        for s in old
        if int.from_bytes(s["trace_id"], "big") in (3, 4) and s["parent_span_id"]
    ]
    post(base, trace_request(old))
    post(base, trace_request(recent))
    post(base, trace_request(straddle))  # children of traces 3 and 4 now, their roots in May: kept, roots gone
    deadline = time.monotonic() + 120
    while rows(receiver, "SELECT count(*) FROM spans WHERE end_time < CAST(now() AS TIMESTAMP) - INTERVAL 2 DAY")[0][0]:
        assert time.monotonic() < deadline, "retention did not delete the old spans"
        time.sleep(0.2)
    wait_maintained(base, receiver.con)
    deadline = time.monotonic() + 60
    while rows(receiver, "SELECT count(*) FROM dirty_traces")[0][0]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    wait_maintained(base, receiver.con)
    runs = {r["run_id"]: r for r in assert_same_runs(receiver.con)}
    assert len(runs) == 36 + 2  # the recent copies (run-x among them), and what is left of traces 3 and 4
    assert runs[f"{3:032x}"]["agent_name"] is None  # its root (the agent) was deleted


def test_a_changed_fingerprint_rebuilds_from_raw(tmp_path: Path, make_receiver: Any) -> None:
    db = tmp_path / "store.duckdb"
    receiver = make_receiver(db=db)
    base = f"http://127.0.0.1:{receiver.http_port}"
    post(base, trace_request(scenario_spans()))
    wait_maintained(base, receiver.con)
    receiver.stop()
    con = duckdb.connect(str(db))
    con.execute("UPDATE otel_agent_meta SET value = 'sha256:other' WHERE key = ?", [FINGERPRINT_KEY])
    con.execute("UPDATE run_summary SET provider_calls = 99")  # what another release might have kept
    con.close()
    receiver = make_receiver(db=db)
    base = f"http://127.0.0.1:{receiver.http_port}"
    derived = wait_maintained(base, receiver.con)
    assert derived["rebuilds"] == 1
    runs = assert_same_runs(receiver.con)
    assert len(runs) == 36
    assert max(r["provider_calls"] for r in runs) < 99


def test_a_version_4_store_is_migrated_and_its_runs_built(tmp_path: Path, make_receiver: Any) -> None:
    db = tmp_path / "v4.duckdb"
    exporter = DuckDBSpanExporter(db)
    exporter.shutdown()
    receiver = make_receiver(db=db)
    post(f"http://127.0.0.1:{receiver.http_port}", trace_request(scenario_spans()))
    receiver.stop()
    con = duckdb.connect(str(db))  # what schema version 4 held: no ingest_seq, no state
    for table in ("spans", "span_events", "logs"):
        con.execute(f"ALTER TABLE {table} DROP COLUMN ingest_seq")
    con.execute("DROP SEQUENCE ingest_seq_gen")
    con.execute("UPDATE otel_agent_meta SET value = '4' WHERE key = 'schema_version'")
    con.execute("DELETE FROM otel_agent_meta WHERE key LIKE 'maintained%'")
    con.execute(statement("views/runs/span_fields"))  # the query-time oa_scoped_spans, as version 4 had
    con.execute("CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL)")
    con.execute("CREATE OR REPLACE MACRO oa_health_facts() AS TABLE SELECT * FROM oa_health_facts_computed()")
    for table in ("trace_commits", "run_traces", "dirty_traces", "run_summary", "health_facts"):
        con.execute(f"DROP TABLE {table}")
    con.close()
    receiver = make_receiver(db=db)
    base = f"http://127.0.0.1:{receiver.http_port}"
    assert rows(receiver, "SELECT count(*) FROM spans WHERE ingest_seq IS NULL")[0][0] == 0
    post(base, trace_request([span(77, 0, None, "chat x", chat("gpt-4o", 5))]))
    wait_maintained(base, receiver.con)
    assert len(assert_same_runs(receiver.con)) == 36 + 1
    assert stored_seq(receiver.con) > 0


def test_a_file_whose_state_lags_is_read_through_the_query_time_views(tmp_path: Path) -> None:
    db = tmp_path / "store.duckdb"
    exporter = DuckDBSpanExporter(db)
    exporter.shutdown()
    con = open_store(db)
    writer = Writer(con, max_inflight_bytes=1 << 62)
    payload = trace_request(scenario_spans()).SerializeToString()
    writer.write(decode_payload("traces", PROTOBUF, payload, Redactor(load_rules(None)), None, 0))
    writer.close()
    con.close()  # rows stored after the state was built, never folded in (as after a kill -9)
    reader = open_read_only([str(db)])
    try:
        assert reader.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 36
    finally:
        reader.close()
