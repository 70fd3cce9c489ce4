"""Alert evaluation at scale (issue 36): what one evaluation of every kind of rule costs on a large store, and what
evaluating every --interval seconds costs ingest.

A receiver (this checkout's, in this process, default settings) on a new DuckDB file is filled through OTLP/gRPC
by a client process with runs of our instrumentation's shape (bench/derive.py's RunBuilder: 100 spans a run —
steps, skills, provider calls with cost, tools, guards, a verifier, evidence, an artifact and a handoff
delegation), spread over the last 24 h so every rule's window holds data. Then, with ingest stopped:

  * one rule of each kind (docs/alerts.md; the rules file is printed) is evaluated --repeat times after a warm-up
    (``Evaluator.evaluate``, the receiver's own evaluator and cursors): the median of each rule's time and of the
    whole evaluation, and what fired (the receipt rule finds every unaccepted delegation orphaned: its 1,000-alert
    cap is reached);
  * the /metrics state figures (receipts by state, runs by status);
  * ingest of --ingest-spans more spans, in --rounds alternating rounds with an evaluation every --interval s
    and without: spans/s per round and the ratio of the medians (with / without).

    python bench/alerts.py --spans 1000000
    python bench/alerts.py --spans 10000000 --rounds 4          # the lead's 10 M-span measurement
    python bench/alerts.py --spans 200000 --repeat 3            # a smoke run

The 2 cores are shared: read the same-run ratio and the per-rule times, not absolute spans/s.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import derive

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
DAY_NS = 86_400 * 10**9

RULES = """
[[rule]]
name = "handoff_orphaned"
kind = "receipt"
state = "orphaned"

[[rule]]
name = "handoff_stuck"
kind = "receipt"
state = "stuck"

[[rule]]
name = "run_abandoned"
kind = "run_abandoned"

[[rule]]
name = "runs_failing"
kind = "error_rate"
window = "1h"
threshold = 0.5
group_by = "service_name"

[[rule]]
name = "provider_failing"
kind = "error_rate"
of = "providers"
window = "15m"
threshold = 0.2

[[rule]]
name = "spend_per_hour"
kind = "cost"
per = "hour"
budget_usd = 1.0
group_by = "service_name"

[[rule]]
name = "expensive_run"
kind = "cost"
per = "run"
budget_usd = 0.5
lookback = "1h"

[[rule]]
name = "over_budget"
kind = "budget_exceeded"
lookback = "1h"

[[rule]]
name = "guards_blocking"
kind = "guard_blocks"
window = "1h"
above = 100

[[rule]]
name = "running_runs"
kind = "sql"
query = '''
SELECT run_id AS key, status FROM runs
WHERE status = 'running' AND start_time > timezone('UTC', now()) - INTERVAL 1 HOUR
'''
"""


def client(port: int, first_run: int, n_runs: int, start_ns: int, span_ns: int, done: Any) -> None:
    """Send ``n_runs`` runs (5 a request), from run number ``first_run``, over two concurrent gRPC streams."""
    import grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
    call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
    per = derive.RUNS_PER_REQUEST
    starts = list(range(first_run, first_run + n_runs, per))

    def send(part: list[int]) -> None:
        rnd = random.Random(first_run + part[0] if part else 0)
        for s in part:
            body, _ = derive.make_request(rnd, s, min(per, first_run + n_runs - s), start_ns, span_ns)
            while True:
                try:
                    call(body, timeout=300)
                    break
                except grpc.RpcError as exc:
                    if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                        raise
                    time.sleep(0.05)

    threads = [threading.Thread(target=send, args=(starts[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    channel.close()
    done.put(n_runs)


def send_runs(port: int, first_run: int, n_runs: int, start_ns: int, span_ns: int) -> float:
    """Send in a client process; the wall-clock seconds until every request was acknowledged."""
    ctx = mp.get_context("spawn")
    done = ctx.Queue()
    began = time.monotonic()
    proc = ctx.Process(target=client, args=(port, first_run, n_runs, start_ns, span_ns, done))
    proc.start()
    done.get()
    proc.join()
    return time.monotonic() - began


def start_receiver(db: str, rules: str | None, interval_s: float = 3600.0, **extra: Any) -> Any:
    from otel_agent.config import ReceiverConfig
    from otel_agent.main import serving

    config = ReceiverConfig.resolve(
        db=db, grpc_endpoint="127.0.0.1:0", http_endpoint="127.0.0.1:0", alert_rules=rules,
        alert_interval_s=interval_s, alert_eval_timeout_s=60.0, **extra,
    )  # fmt: skip
    return serving(config).start()


def wait_derived(receiver: Any) -> None:
    """Until the maintained runs state has folded everything committed (the rules read it)."""
    while True:
        report = receiver.derived.report()
        if report["ready"] and not report["backlog_rows"]:
            return
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ingest-spans", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3, help="ingest rounds with and without evaluation, alternating")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between evaluations in the ingest rounds")
    ap.add_argument("--dir", default=None, help="where the store goes (default: a temporary directory)")
    ap.add_argument("--reuse", action="store_true", help="a store already in --dir is measured as it is (no fill)")
    args = ap.parse_args()
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    work = Path(args.dir or tempfile.mkdtemp(prefix="otel_agent_alerts_bench_"))
    work.mkdir(parents=True, exist_ok=True)
    rules = work / "rules.toml"
    rules.write_text(RULES)
    db = str(work / "alerts.duckdb")
    n_runs = args.spans // derive.SPANS_PER_RUN
    now_ns = time.time_ns()
    span_ns = DAY_NS // max(n_runs, 1)
    print(f"load average {os.getloadavg()}; store {db}; {n_runs:,} runs of {derive.SPANS_PER_RUN} spans over 24 h")
    reused = args.reuse and Path(db).exists()
    receiver = start_receiver(db, str(rules))
    try:
        if reused:
            print("the store in --dir as it is (--reuse): its runs are as old as when it was filled")
        else:
            seconds = send_runs(receiver.grpc_port, 0, n_runs, now_ns - DAY_NS, span_ns)
            print(
                f"filled {n_runs * derive.SPANS_PER_RUN:,} spans in {seconds:.0f} s; waiting for the maintained state…"
            )
        wait_derived(receiver)
        evaluator = receiver.alerts.evaluator
        evaluator.evaluate()  # warm-up (and the first alerts: every later evaluation has nothing new to write)
        totals: list[float] = []
        per_rule: dict[str, list[float]] = {r.name: [] for r in evaluator.rules.rules}
        for _ in range(args.repeat):
            evaluator.evaluate()
            totals.append(evaluator.stats.last_seconds)
            for name, stats in evaluator.stats.rules.items():
                per_rule[name].append(stats.last_seconds)
        firing = evaluator.firing_by_rule()
        print(f"\none evaluation of every rule (median of {args.repeat}): {statistics.median(totals) * 1000:.0f} ms")
        print(f"{'rule':<20} {'kind':<16} {'median ms':>10} {'max ms':>8} {'firing':>7} {'failures':>9}")
        for rule in evaluator.rules.rules:
            times = per_rule[rule.name]
            print(
                f"{rule.name:<20} {rule.kind:<16} {statistics.median(times) * 1000:>10.1f} "
                f"{max(times) * 1000:>8.1f} {firing[rule.name]:>7} {evaluator.stats.rules[rule.name].failures:>9}"
            )
        figures = receiver.alerts.figures
        figures.refresh()
        print(
            f"\n/metrics state figures: {figures.last_seconds * 1000:.0f} ms (receipts {figures.receipts}, "
            f"runs {figures.runs})"
        )

        # Ingest with and without an evaluation every --interval seconds.
        per_round = max(args.ingest_spans // derive.SPANS_PER_RUN, derive.RUNS_PER_REQUEST)
        rates: dict[bool, list[float]] = {True: [], False: []}
        next_run = n_runs
        for i in range(args.rounds * 2):
            evaluating = i % 2 == 1
            stop = threading.Event()

            def loop(stop: threading.Event = stop) -> None:
                while not stop.wait(args.interval):
                    evaluator.evaluate()

            thread = threading.Thread(target=loop) if evaluating else None
            if thread:
                thread.start()
            seconds = send_runs(receiver.grpc_port, next_run, per_round, time.time_ns() - 3600 * 10**9, 10**9)
            stop.set()
            if thread:
                thread.join()
            next_run += per_round
            rate = per_round * derive.SPANS_PER_RUN / seconds
            rates[evaluating].append(rate)
            print(f"round {i + 1}: {'evaluating' if evaluating else 'no alerts '} {rate:,.0f} spans/s")
        with_, without = statistics.median(rates[True]), statistics.median(rates[False])
        print(
            f"\ningest with an evaluation every {args.interval:g} s / without: {with_ / without:.3f} "
            f"({with_:,.0f} / {without:,.0f} spans/s, medians of {args.rounds})"
        )
    finally:
        receiver.stop()
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
