"""Derived-view benchmark (issue 4 §5): a 1 M-span store shaped like what otel_agent.instrument emits, then the
latency of the run views.

The store is written through the receiver's own fold and writer (OTLP protobuf requests → decode_payload →
Writer), so it holds exactly what a receiver would. Each run is one trace of 100 spans: the flow_run, 6 steps,
and per step a skill invocation, 3 provider calls (GenAI usage, cost on a third of them, a retry and a
fallback event on some, context-snapshot attributes), 3 tool invocations, 2 guard results, a verifier result
and 5 evidence records; plus an artifact, an artifact version and a handoff delegation. 10 000 runs over 30
days, 4 services, 6 provider/model pairs.

Measured (median of --repeat after one warm-up, fresh cursor each; wall-clock, and the process CPU time, which
other load on a shared machine disturbs less):
  * one run's rollup            SELECT * FROM runs_for_run(?)           target < 100 ms
  * provider_health over all    SELECT * FROM provider_health            target < 1 s
  * cost_breakdown for one run  SELECT * FROM cost_breakdown_for_run(?)  target < 100 ms
and, for reference, the same run's run_metrics_for_run and the raw cost of finding a run's spans by its
otel_agent.run.id attribute (a full JSON scan) versus by a typed column (the promotion this would need).

    python bench/derive.py                      # builds /tmp/otel_agent_derive_1m.duckdb once, then queries
    python bench/derive.py --spans 200000 --rebuild
    python bench/derive.py --baseline eb1bdf0   # the same queries on eb1bdf0's code and this checkout, each on
                                                # its own store, alternating (bench/derive_ab.py): CPU ratios
    python bench/derive.py --baseline eb1bdf0 --rounds 5 --paired 60   # and 60 back-to-back pairs per query
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from collections import deque
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import kv
from store_options import add_store_options

SPANS_PER_RUN = 100
BUILD_INFLIGHT = 16  # decoded requests the store build keeps queued for the writer
RUNS_PER_REQUEST = 5
MODELS = [
    ("openai", "gpt-4o", "gpt-4o-2024-08-06"),
    ("openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
    ("anthropic", "claude-sonnet-4", "claude-sonnet-4-20250514"),
    ("anthropic", "claude-3-5-haiku", "claude-3-5-haiku-20241022"),
    ("google", "gemini-2.5-flash", "gemini-2.5-flash"),
    ("openai", "house-model", "house-model"),
]
TOOLS = [("web_search", "tavily"), ("fetch_url", None), ("python", None), ("read_file", None)]
SKILLS = [("research-planner", "1.0.0"), ("summarizer", "2.1.0"), ("fact-checker", "0.9.3")]
STEPS = ["clarify", "plan", "search", "read", "verify", "synthesize"]
SERVICES = ["research-agent", "support-agent", "coding-agent", "triage-agent"]


class RunBuilder:
    """Spans of one run, appended to a ScopeSpans, with ids and times like the helpers produce."""

    def __init__(self, rnd: random.Random, scope_spans, run_no: int, start_ns: int) -> None:
        self.rnd = rnd
        self.ss = scope_spans
        self.run_id = f"run_{run_no:08d}{rnd.getrandbits(40):010x}"
        self.trace_id = rnd.randbytes(16)
        self.t = start_ns

    def span(self, name, kind, parent, start, end, attrs, status=0, events=()):
        s = self.ss.spans.add()
        s.trace_id = self.trace_id
        s.span_id = self.rnd.randbytes(8)
        if parent is not None:
            s.parent_span_id = parent
        s.name = name
        s.kind = kind
        s.start_time_unix_nano = start
        s.end_time_unix_nano = end
        s.attributes.extend([kv(k, v) for k, v in attrs.items()])
        for ev_name, ev_time, ev_attrs in events:
            e = s.events.add()
            e.name = ev_name
            e.time_unix_nano = ev_time
            e.attributes.extend([kv(k, v) for k, v in ev_attrs.items()])
        if status:
            s.status.code = status
        return s.span_id

    def base(self, kind: str, step_id: str | None) -> dict[str, object]:
        attrs: dict[str, object] = {"otel_agent.record.kind": kind, "otel_agent.run.id": self.run_id}
        if step_id:
            attrs["otel_agent.step.id"] = step_id
        return attrs

    def build(self) -> None:
        rnd = self.rnd
        run_start = self.t
        run_span_id = rnd.randbytes(8)  # the flow_run span is written last (it ends last), with this id
        t = run_start + 1_000_000
        model_calls = tool_calls = 0
        cost = 0.0
        for step_no, step_name in enumerate(STEPS):
            step_id = f"step_{rnd.getrandbits(64):016x}"
            step_start = t
            step_attrs = self.base("step", None) | {"otel_agent.step.id": step_id, "otel_agent.step.name": step_name}
            step_span = rnd.randbytes(8)
            skill_name, skill_version = SKILLS[step_no % len(SKILLS)]
            skill_id = f"skill_{rnd.getrandbits(64):016x}"
            skill_span = rnd.randbytes(8)
            skill_start = t + 10_000
            t = skill_start + 10_000
            children = []  # (kind, parent) built after the parents' ids are known
            for _ in range(3):  # provider calls inside the skill
                provider, model, dated = MODELS[rnd.randrange(len(MODELS))]
                dur = rnd.randint(200_000_000, 4_000_000_000)
                attrs = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": provider,
                    "gen_ai.request.model": model,
                } | self.base("provider_call", step_id)
                attrs |= {
                    "gen_ai.response.model": dated,
                    "gen_ai.response.id": f"chatcmpl-{rnd.getrandbits(48):x}",
                    "gen_ai.response.finish_reasons": ["stop"],
                    "gen_ai.usage.input_tokens": rnd.randint(200, 8000),
                    "gen_ai.usage.output_tokens": rnd.randint(20, 1200),
                    "gen_ai.usage.cache_read.input_tokens": rnd.randint(0, 150),
                    "otel_agent.context.snapshot_id": f"ctx_{rnd.getrandbits(64):016x}",
                    "otel_agent.context.total_budget_tokens": 8000,
                    "otel_agent.context.used_tokens": rnd.randint(1000, 6800),
                }
                if rnd.random() < 0.33:
                    c = round(rnd.random() / 50, 6)
                    attrs["otel_agent.cost.usd"] = c
                    cost += c
                events = []
                status = 2 if rnd.random() < 0.03 else 0
                if status:
                    attrs["error.type"] = "TimeoutError"
                if rnd.random() < 0.1:
                    attrs["otel_agent.retry.count"] = 1
                    events.append(("otel_agent.retry", t + 1000, {"otel_agent.retry.attempt": 1}))
                if rnd.random() < 0.05:
                    attrs["otel_agent.fallback.count"] = 1
                    attrs["otel_agent.fallback.original_provider"] = "openai"
                    attrs["otel_agent.fallback.original_model"] = "gpt-4o"
                    events.append(
                        (
                            "otel_agent.fallback",
                            t + 2000,
                            {
                                "otel_agent.fallback.from_provider": "openai",
                                "otel_agent.fallback.from_model": "gpt-4o",
                                "otel_agent.fallback.to_provider": provider,
                                "otel_agent.fallback.to_model": model,
                                "otel_agent.fallback.reason": "rate_limited",
                            },
                        )
                    )
                children.append((f"chat {model}", 3, skill_span, t, t + dur, attrs, status, events))
                model_calls += 1
                t += dur + 1_000_000
            skill_end = t
            for _ in range(3):  # tools in the step
                tool, tool_provider = TOOLS[rnd.randrange(len(TOOLS))]
                dur = rnd.randint(5_000_000, 900_000_000)
                attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool} | self.base(
                    "tool_invocation", step_id
                )
                attrs |= {"gen_ai.tool.call.id": f"call_{rnd.getrandbits(48):x}", "gen_ai.tool.type": "function"}
                if tool_provider:
                    attrs["otel_agent.tool.provider"] = tool_provider
                    attrs["otel_agent.cost.usd"] = 0.001
                    cost += 0.001
                status = 2 if rnd.random() < 0.05 else 0
                if status:
                    attrs["error.type"] = "ToolError"
                children.append((f"execute_tool {tool}", 1, step_span, t, t + dur, attrs, status, ()))
                tool_calls += 1
                t += dur + 1_000_000
            for g in range(2):
                blocked = rnd.random() < 0.1
                attrs = {"gen_ai.operation.name": "apply_guardrail"} | self.base("guard_result", step_id)
                attrs |= {
                    "otel_agent.guard.name": ["output.citation_required", "budget.cost"][g],
                    "otel_agent.guard.stage": ["output", "budget"][g],
                    "otel_agent.guard.outcome": "blocked" if blocked else "passed",
                }
                if blocked:
                    attrs["otel_agent.guard.reason"] = "uncited_claim"
                children.append((f"apply_guardrail {attrs['otel_agent.guard.name']}", 1, step_span, t, t, attrs, 0, ()))
                t += 100_000
            attrs = self.base("verifier_result", step_id) | {
                "otel_agent.verifier.name": "citation_coverage",
                "otel_agent.verifier.outcome": "passed" if rnd.random() < 0.8 else "failed",
                "otel_agent.verifier.score": round(rnd.random(), 3),
            }
            children.append(("verify citation_coverage", 1, step_span, t, t, attrs, 0, ()))
            for r in range(5):
                kind = ["source", "evidence_item", "claim", "citation", "evidence_item"][r]
                attrs = self.base(kind, step_id) | {
                    f"otel_agent.{kind.split('_')[0]}.id": f"{kind[:3]}_{rnd.getrandbits(64):016x}",
                    "otel_agent.evidence.excerpt": "LangGraph adoption grew " * 4,
                }
                children.append((f"otel_agent.{kind}", 1, step_span, t, t, attrs, 0, ()))
                t += 50_000
            step_end = t + 1_000_000
            t = step_end + 1_000_000
            # parents first in the request is not required; write skill and step with their known ids
            sk = self.ss.spans.add()
            sk.trace_id, sk.span_id, sk.parent_span_id = self.trace_id, skill_span, step_span
            sk.name, sk.kind = f"skill {skill_name}@{skill_version}", 1
            sk.start_time_unix_nano, sk.end_time_unix_nano = skill_start, skill_end
            sk.attributes.extend(
                [
                    kv(k, v)
                    for k, v in (
                        self.base("skill_invocation", step_id)
                        | {
                            "otel_agent.skill.name": skill_name,
                            "otel_agent.skill.version": skill_version,
                            "otel_agent.skill.invocation_id": skill_id,
                        }
                    ).items()
                ]
            )
            for name, kind, parent, start, end, attrs, status, events in children:
                self.span(name, kind, parent, start, end, attrs, status, events)
            st = self.ss.spans.add()
            st.trace_id, st.span_id, st.parent_span_id = self.trace_id, step_span, run_span_id
            st.name, st.kind = f"step {step_name}", 1
            st.start_time_unix_nano, st.end_time_unix_nano = step_start, step_end
            st.attributes.extend([kv(k, v) for k, v in step_attrs.items()])
        art = f"art_{rnd.getrandbits(64):016x}"
        self.span("otel_agent.artifact", 1, run_span_id, t, t, self.base("artifact", None) | {
            "otel_agent.artifact.id": art, "otel_agent.artifact.type": "markdown_report",
            "otel_agent.artifact.name": "report"})  # fmt: skip
        self.span("otel_agent.artifact_version", 1, run_span_id, t, t, self.base("artifact_version", None) | {
            "otel_agent.artifact.id": art, "otel_agent.artifact_version.id": f"artv_{rnd.getrandbits(64):016x}",
            "otel_agent.artifact_version.number": 1, "otel_agent.artifact_version.content": "# report\n" * 20,
            "otel_agent.artifact_version.content_sha256": f"{rnd.getrandbits(256):064x}"})  # fmt: skip
        self.span("otel_agent.receipt.delegated", 4, run_span_id, t, t, self.base("receipt_transition", None) | {
            "otel_agent.receipt.operation_id": f"op_{rnd.getrandbits(64):016x}",
            "otel_agent.receipt.handoff_id": f"hof_{rnd.getrandbits(64):016x}",
            "otel_agent.receipt.transition": "delegated", "otel_agent.receipt.target": "fact_checker",
            "otel_agent.receipt.expected_artifact": "fact_check_report"})  # fmt: skip
        run_end = t + 2_000_000
        run = self.ss.spans.add()
        run.trace_id, run.span_id = self.trace_id, run_span_id
        run.name, run.kind = "invoke_workflow deep_research", 1
        run.start_time_unix_nano, run.end_time_unix_nano = run_start, run_end
        attrs = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": "deep_research",
            "otel_agent.record.kind": "flow_run",
            "otel_agent.run.id": self.run_id,
            "gen_ai.agent.name": "research_agent",
            "otel_agent.run.budget.max_model_calls": 20,
            "otel_agent.run.budget.max_cost_usd": 0.5,
            "otel_agent.run.usage.model_calls": model_calls,
            "otel_agent.run.usage.tool_calls": tool_calls,
            "otel_agent.run.usage.cost_usd": round(cost, 6),
            "otel_agent.run.budget.exceeded": False,
        }
        run.attributes.extend([kv(k, v) for k, v in attrs.items()])
        self.t = run_end


def make_request(
    rnd: random.Random, first_run: int, n_runs: int, start_ns: int, span_ns: int
) -> tuple[bytes, list[str]]:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(
        [kv("service.name", SERVICES[first_run % len(SERVICES)]), kv("service.version", "1.4.2")]
    )
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "otel_agent", "0.1.0"
    run_ids = []
    for i in range(n_runs):
        b = RunBuilder(rnd, ss, first_run + i, start_ns + (first_run + i) * span_ns)
        b.build()
        run_ids.append(b.run_id)
    return req.SerializeToString(), run_ids


def build_store(path: str, n_spans: int, seed: int, runs: tuple[int, int] | None = None, label: str = "") -> list[str]:
    """The store of ``n_spans`` at ``path`` through the receiver's fold and writer; ``runs=(lo, hi)`` writes only
    those runs of it (the same times and run numbering; bench/lifecycle.py builds a large store in parts), each
    call with its own random stream ``seed``. Returns the run ids written."""
    from otel_agent.fold.decode import PROTOBUF, decode_payload
    from otel_agent.fold.redact import Redactor, load_rules
    from otel_agent.ingest.writer import Writer
    from otel_agent.store.database import open_store

    for suffix in ("", ".wal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    n_runs = max(1, n_spans // SPANS_PER_RUN)
    lo, hi = runs or (0, n_runs)
    rnd = random.Random(seed)
    start_ns = 1_790_000_000_000_000_000  # 2026-09
    run_gap_ns = 30 * 86400 * 10**9 // n_runs
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 62)
    redactor = Redactor(load_rules(None, use_defaults=True))
    run_ids: list[str] = []
    # Requests in flight, as a receiver has them, so the writer group-commits them: one commit per 500-span
    # request (write() and wait) made the build commit-bound (~1.6x slower).
    inflight: deque = deque()
    t0 = time.perf_counter()
    for first in range(lo, hi, RUNS_PER_REQUEST):
        payload, ids = make_request(rnd, first, min(RUNS_PER_REQUEST, hi - first), start_ns, run_gap_ns)
        run_ids += ids
        batch = decode_payload("traces", PROTOBUF, payload, redactor, None, time.time_ns() // 1000)
        inflight.append(writer.submit(batch, writer.admit(batch.payload_bytes)))
        if len(inflight) >= BUILD_INFLIGHT:
            inflight.popleft().result()
        if first > lo and (first - lo) % 1000 == 0:
            done = (first - lo) * SPANS_PER_RUN
            rate = done / (time.perf_counter() - t0)
            print(f"  {label}{done:>9,} spans written ({rate:,.0f}/s); load {os.getloadavg()[0]:.1f}",
                  file=sys.stderr, flush=True)  # fmt: skip
    for future in inflight:
        future.result()
    writer.close()
    con.execute("CHECKPOINT").fetchall()
    con.close()
    return run_ids


def timed(con, sql: str, params: list, repeat: int) -> tuple[float, float, int]:
    """Median wall-clock ms, median process CPU ms (both threads; less sensitive to other load), rows."""

    def once() -> tuple[float, float, int]:
        cur = con.cursor()
        t0, c0 = time.perf_counter(), time.process_time()
        rows = cur.execute(sql, params).fetchall()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        cur.close()
        return dt, dc, len(rows)

    once()  # warm-up
    results = [once() for _ in range(repeat)]
    return (
        statistics.median(r[0] for r in results) * 1000,
        statistics.median(r[1] for r in results) * 1000,
        results[0][2],
    )


def bench_cases(run_id: str) -> list[tuple[str, str, list, int | None]]:
    """(label, SQL, parameters, target ms) of the measured queries; the same list for both sides of --baseline."""
    return [
        ("one run's rollup (runs_for_run)", "SELECT * FROM runs_for_run(?)", [run_id], 100),
        ("provider_health over all", "SELECT * FROM provider_health", [], 1000),
        ("cost_breakdown for one run", "SELECT * FROM cost_breakdown_for_run(?)", [run_id], 100),
        ("  run_metrics_for_run (reference)", "SELECT * FROM run_metrics_for_run(?)", [run_id], None),
        (
            "  find a run's spans by JSON attribute",
            "SELECT count(*) FROM spans WHERE attributes->>'otel_agent.run.id' = ?",
            [run_id],
            None,
        ),
    ]


def prepare_store(db: str, n_spans: int, seed: int, rebuild: bool) -> None:
    """Build the store when asked or missing; else apply the importable otel_agent's view definitions to it."""
    if rebuild or not os.path.exists(db):
        print(f"building {n_spans:,} spans into {db} …", file=sys.stderr)
        t0 = time.perf_counter()
        build_store(db, n_spans, seed)
        print(f"built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    else:
        from otel_agent.store.database import open_store

        open_store(db).close()  # apply the current view definitions to an existing file


def middle_run(con) -> tuple[int, int, str]:
    """(spans, runs, the run in the middle by id): the run the per-run queries are timed on."""
    n = con.execute("SELECT count(*) FROM spans").fetchall()[0][0]
    runs = [r[0] for r in con.execute(
        "SELECT DISTINCT attributes->>'otel_agent.run.id' FROM spans "
        "WHERE attributes->>'otel_agent.record.kind' = 'flow_run' ORDER BY 1"
    ).fetchall()]  # fmt: skip
    return n, len(runs), runs[len(runs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store_options(ap)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-prototype", action="store_true", help="skip the promoted-columns prototype")
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="compare with the otel_agent of git revision REV: each side builds its own store (same seed and "
        "size, so the same contents) and is queried in its own process, alternating, --rounds times",
    )
    ap.add_argument("--rounds", type=int, default=3, help="with --baseline: alternating rounds (median reported)")
    ap.add_argument("--only", metavar="TEXT", help="with --baseline: only the queries whose SQL contains TEXT")
    ap.add_argument(
        "--paired",
        type=int,
        default=0,
        metavar="N",
        help="with --baseline: then also N paired samples in one process, both stores open, the two sides' runs "
        "of a query back to back (the order alternating), and the median of the N ratios",
    )
    ap.add_argument("--worker", metavar="CODE_ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.baseline:
        import derive_ab

        derive_ab.compare(args)
        return
    if args.worker:
        import derive_ab

        derive_ab.serve(args)
        return

    import duckdb

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    prepare_store(args.db, args.spans, args.seed, args.rebuild)
    con = duckdb.connect(args.db, read_only=True)
    con.execute(f"SET threads = {int(args.threads)}").fetchall()
    n, n_runs, run_id = middle_run(con)
    print(f"store: {n:,} spans, {n_runs:,} runs; one run = {run_id}; threads={args.threads}")
    cases = bench_cases(run_id)
    print("\nas shipped (spans.run_id typed; other attributes read from the JSON):")
    report(con, cases, args.repeat)
    con.close()

    if args.no_prototype:
        return
    # Prototype of the remedy (not the shipped schema): the attributes the views read promoted to typed columns
    # at fold time. Emulated on a copy of the store: layer 1 (oa_span_fields_all) materialised once as a table of
    # typed columns, and the macro pointed at it, so every view above runs unchanged on top.
    proto = args.db + ".promoted.duckdb"
    for suffix in ("", ".wal"):
        if os.path.exists(proto + suffix):
            os.remove(proto + suffix)
    shutil.copyfile(args.db, proto)
    pcon = duckdb.connect(proto)
    pcon.execute(f"SET threads = {int(args.threads)}").fetchall()
    t0 = time.perf_counter()
    pcon.execute("CREATE TABLE spans_promoted AS SELECT * FROM oa_span_fields_all(NULL) ORDER BY start_time").fetchall()
    pcon.execute(PROMOTED_FIELDS_MACRO).fetchall()
    pcon.execute("CHECKPOINT").fetchall()
    print(
        f"\nprototype: typed columns instead of JSON for the attributes the views read "
        f"(materialised in {time.perf_counter() - t0:.1f} s; a real implementation fills them at fold time):"
    )
    report(pcon, cases[:4], args.repeat)
    pcon.close()
    for suffix in ("", ".wal"):
        if os.path.exists(proto + suffix):
            os.remove(proto + suffix)


PROMOTED_FIELDS_MACRO = """
CREATE OR REPLACE MACRO oa_span_fields_all(rid, latest := false) AS TABLE
SELECT *
FROM spans_promoted
WHERE rid IS NULL
   OR trace_id IN (SELECT trace_id FROM spans_promoted WHERE b."otel_agent.run.id" = rid OR trace_id = rid)
QUALIFY NOT latest
     OR row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
"""


def report(con, cases, repeat: int) -> None:
    print(f"{'query':<42} {'median ms':>10} {'cpu ms':>8} {'rows':>6} {'target ms':>10}  verdict")
    for label, sql, params, target in cases:
        ms, cpu, nrows = timed(con, sql, params, repeat)
        verdict = "" if target is None else ("ok" if ms < target else "MISSED")
        print(f"{label:<42} {ms:>10.1f} {cpu:>8.1f} {nrows:>6} {target or '':>10}  {verdict}")


if __name__ == "__main__":
    main()
