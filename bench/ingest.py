"""Ingest benchmark: committed spans/s, export latency and receiver memory, against the decode ceiling.

A real ``otel-agent serve`` runs in its own process; client processes send pre-encoded, realistic agent
spans (bench/agent_spans.py) over gRPC, then over HTTP/protobuf, each phase for --duration seconds with
--inflight requests in flight per client. A paced gRPC phase at --paced-rate spans/s measures latency
under a steady load. The ``baseline`` phase runs bench/baseline_receiver.py (the straightforward design)
under the same clients and payload; each round runs every phase once, and the same-run ratio of our gRPC
throughput to the baseline's is printed per round and as the median. In the same run, the ceiling:
protobuf decode + columnar fold of the same payload in one process, single-threaded, and the ratio of
committed throughput to it.

    python bench/ingest.py                       # defaults: 4 clients, 20 s per phase, 3 rounds
    python bench/ingest.py --duration 5 --rounds 1 --phases baseline,grpc
    python bench/ingest.py --phases grpc --rounds 1 --profile /tmp/prof   # py-spy the receiver (bench only)
    python bench/ingest.py --lineage             # with evidence records and retrieval documents in the mix
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import duckdb
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReceiverProcess:
    """``otel-agent serve`` (``baseline=False``) or ``bench/baseline_receiver.py`` in its own process."""

    def __init__(
        self,
        db: str,
        extra: list[str],
        baseline: bool = False,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.grpc_port, self.http_port = free_port(), free_port()
        self.baseline = baseline
        if baseline:
            cmd = [sys.executable, str(Path(__file__).with_name("baseline_receiver.py")), "--db", db,
                   "--grpc-port", str(self.grpc_port)]  # fmt: skip
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            if self.proc.stdout is None or self.proc.stdout.readline().strip() != "ready":
                raise RuntimeError("baseline receiver did not start")
        else:
            cmd = [sys.executable, "-m", "otel_agent", "serve", "--db", db,
                   "--grpc-endpoint", f"127.0.0.1:{self.grpc_port}", "--http-endpoint", f"127.0.0.1:{self.http_port}",
                   "--log-level", "warning", *extra]  # fmt: skip
            self.proc = subprocess.Popen(cmd, env=env, cwd=cwd)
        self.peak_rss = 0
        self.peak_main_rss = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        deadline = time.time() + 60
        while not baseline and time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            if not baseline:
                raise RuntimeError("receiver did not start")
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        root = psutil.Process(self.proc.pid)
        ticks = 0
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
                main = procs[0].memory_info().rss
                self.peak_rss = max(self.peak_rss, main + sum(p.memory_info().rss for p in procs[1:]))
                self.peak_main_rss = max(self.peak_main_rss, main)
                ticks += 1
                if ticks % 5 == 0:
                    # RSS summed over processes counts the shared libraries (libarrow, libpython…) once per
                    # process; PSS splits shared pages between them (read from smaps: costlier, so less often)
                    self.peak_pss = max(self.peak_pss, sum(p.memory_full_info().pss for p in procs))
            except psutil.Error:
                pass
            time.sleep(0.1)

    def cpu_seconds(self) -> tuple[float, float]:
        """(receiver main process, its decode workers) CPU seconds so far."""
        root = psutil.Process(self.proc.pid)
        main = sum(root.cpu_times()[:2])
        workers = sum(sum(c.cpu_times()[:2]) for c in root.children(recursive=True))
        return main, workers

    def stop(self) -> None:
        self._stop.set()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)


def client_main(kind: str, port: int, seed: int, n_requests: int, spans: int, inflight: int, duration: float,
                rate: float, max_rate: float, lineage: bool, ready: mp.Queue, go: mp.Queue,
                out: mp.Queue) -> None:  # fmt: skip
    # Every client's spans start "now" and move forward in time, as live traffic does (spans of all clients
    # interleave in time; ids are unique per client and request). Span time advances as fast as real time at the
    # client's expected rate, so end times follow arrival.
    spacing = int(1e9 / (rate or max_rate))

    # "Now" is when sending starts, not when encoding starts: on a loaded machine encoding the pool takes
    # minutes, and spans older than the receiver's recent window (120 s) would send every commit to the
    # stored-duplicate query, which live traffic never needs. The encoding time is estimated from one request.
    t0 = time.perf_counter()
    make_request(spans, time.time_ns(), 0, spacing_ns=spacing, lineage=lineage)
    base = time.time_ns() + int((time.perf_counter() - t0) * n_requests * 1e9)
    payloads = [
        make_request(spans, base + i * spans * spacing, seed * 100_000 + i, spacing_ns=spacing, lineage=lineage)
        for i in range(n_requests)
    ]
    if kind == "grpc":
        import grpc

        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)

        def send(body: bytes) -> bool:
            try:
                call(body, timeout=60)
                return True
            except grpc.RpcError as exc:
                if exc.code() in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                    return False
                raise
    else:
        import requests

        session = requests.Session()
        url = f"http://127.0.0.1:{port}/v1/traces"

        def send(body: bytes) -> bool:
            r = session.post(url, data=body, headers={"Content-Type": "application/x-protobuf"}, timeout=60)
            if r.status_code in (429, 503):
                return False
            r.raise_for_status()
            return True

    lock = threading.Lock()
    state = {"next": 0, "acked": 0, "retries": 0, "lat": [], "when": []}
    ready.put(seed)
    start_at = go.get()
    while time.time() < start_at:
        time.sleep(0.001)
    cpu0 = time.process_time()
    end = start_at + duration
    interval = (spans / rate) * inflight if rate else 0.0

    def worker(k: int) -> None:
        slot = start_at + k * (interval / inflight if interval else 0)
        while True:
            if interval:
                now = time.time()
                if slot > now:
                    time.sleep(slot - now)
                slot += interval
            if time.time() >= end:
                return
            with lock:
                i = state["next"]
                state["next"] += 1
            if i >= len(payloads):
                return
            t0 = time.perf_counter()
            while not send(payloads[i]):
                with lock:
                    state["retries"] += 1
                time.sleep(0.05)
            dt = time.perf_counter() - t0
            with lock:
                state["acked"] += spans
                state["lat"].append(dt)
                state["when"].append(time.time() - start_at - dt)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(inflight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put({"acked": state["acked"], "retries": state["retries"], "lat": state["lat"], "when": state["when"],
             "ran_out": state["next"] >= len(payloads), "cpu_s": time.process_time() - cpu0})  # fmt: skip


def from_checkout(checkout: str) -> dict[str, Any]:
    """``ReceiverProcess`` keywords that run the receiver of another checkout (``--ref``). It runs from that
    checkout too: ``python -m`` puts the working directory ahead of PYTHONPATH, so run from this one it would
    import this checkout's code."""
    cwd = str(Path(checkout).resolve())
    env = {**os.environ, "PYTHONPATH": cwd}
    # The Rust fold is a build product, not in git: a checkout without one (and no editable install that maps it
    # there) folds in Python, and the A/B would measure the fold, not the change. Refuse rather than mislead.
    from otel_agent.fold.native import enabled  # this checkout's receiver runs with this process's environment

    ours, theirs = enabled(), native_fold_enabled_in(cwd)
    if ours != theirs:
        raise SystemExit(
            f"this checkout folds traces {'with' if ours else 'without'} the Rust extension and {cwd} "
            f"{'with' if theirs else 'without'} it: build it where it is missing (pip install . there), or set "
            "OTEL_AGENT_NATIVE_FOLD=off for both"
        )
    return {"env": env, "cwd": cwd}


@functools.cache
def native_fold_enabled_in(checkout: str) -> bool:
    """Whether the receiver of ``checkout`` (run as ``from_checkout`` runs it) folds traces with the Rust extension;
    asked once per checkout, not before every phase of every round."""
    probe = [sys.executable, "-c", "import otel_agent.fold.native as n; print(n.enabled())"]
    env = {**os.environ, "PYTHONPATH": checkout}
    return subprocess.run(probe, env=env, cwd=checkout, capture_output=True, text=True).stdout.strip() == "True"


def run_phase(phase: str, args: argparse.Namespace, rate: float, tmp: str, round_no: int = 0) -> dict:
    """One phase: ``grpc``, ``http`` or ``paced`` against ``otel-agent serve``, ``grpc-python`` the same as
    ``grpc`` with the Python fold only (``OTEL_AGENT_NATIVE_FOLD=off``), ``grpc-ref`` (``paced-ref``,
    ``http-ref``) the same with the code of the checkout ``--ref`` (e.g. main, to measure a change against it
    in one run), ``baseline`` (gRPC, full load) against bench/baseline_receiver.py, each with a new store."""
    kind = "http" if phase.startswith("http") else "grpc"
    baseline = phase == "baseline"
    where: dict[str, Any] = {}
    if phase == "grpc-python":
        where = {"env": {**os.environ, "OTEL_AGENT_NATIVE_FOLD": "off"}}
    elif phase.endswith("-ref"):  # the same receiver from another checkout (--ref): A/B of a change in one run
        where = from_checkout(args.ref)
    db = os.path.join(tmp, f"{phase}-{int(rate)}-{round_no}.duckdb")
    ref_args = args.receiver_args if args.ref_receiver_args is None else args.ref_receiver_args
    extra = (ref_args if phase.endswith("-ref") else args.receiver_args).split()
    receiver = ReceiverProcess(db, extra, baseline=baseline, **where)
    port = receiver.grpc_port if kind == "grpc" else receiver.http_port
    per_client_rate = (rate or args.max_rate) / args.clients
    n_requests = int(per_client_rate * args.duration / args.spans * 1.3) + args.inflight
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()
    ready: mp.Queue = ctx.Queue()
    go: mp.Queue = ctx.Queue()
    client_rate = rate / args.clients if rate else 0.0
    procs = [
        ctx.Process(
            target=client_main,
            args=(
                kind,
                port,
                c + 1,
                n_requests,
                args.spans,
                args.inflight,
                args.duration,
                client_rate,
                args.max_rate / args.clients,
                args.lineage,
                ready,
                go,
                out,
            ),
        )
        for c in range(args.clients)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get()
    start_at = time.time() + args.warmup_s
    time.sleep(max(0.0, start_at - time.time()))
    cpu_before = receiver.cpu_seconds()
    profiler = None
    if args.profile and args.profile_phase == phase:
        profiler = start_profile(receiver.proc.pid, args, f"{args.profile}.{phase}")
    for _ in procs:
        go.put(start_at)
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    cpu_after = receiver.cpu_seconds()
    if profiler is not None:
        profiler.wait()
    if baseline:
        health = {"commits": None, "commit_seconds": 0.0, "commit_stage_seconds": {}}
    else:
        url = f"http://127.0.0.1:{receiver.http_port}/healthz"
        health = json.loads(urllib.request.urlopen(url, timeout=5).read())
    elapsed = args.duration
    acked = sum(r["acked"] for r in results)
    lat = sorted(x for r in results for x in r["lat"])
    if args.latency_log:
        with open(f"{args.latency_log}.{kind}-{int(rate)}.tsv", "w") as f:
            for r in results:
                for when, dt in zip(r["when"], r["lat"], strict=True):
                    f.write(f"{when:.3f}\t{dt * 1000:.1f}\n")
    t_stop = time.perf_counter()
    receiver.stop()
    stop_s = time.perf_counter() - t_stop
    con = duckdb.connect(db, read_only=True)
    stored = con.execute("SELECT count(*) FROM spans").fetchall()[0][0]
    con.close()
    return {
        "phase": phase,
        "transport": kind,
        "offered_rate": rate or "max",
        "acked_spans": acked,
        "stored_spans": stored,
        "committed_spans_per_s": acked / elapsed,
        "p50_ms": lat[len(lat) // 2] * 1000 if lat else None,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1000 if lat else None,
        "retries": sum(r["retries"] for r in results),
        "ran_out_of_requests": any(r["ran_out"] for r in results),
        "receiver_peak_rss_mb": receiver.peak_rss / 2**20,
        "receiver_main_peak_rss_mb": receiver.peak_main_rss / 2**20,
        "receiver_peak_pss_mb": receiver.peak_pss / 2**20,
        "shutdown_s": stop_s,
        "commits": health["commits"],
        "writer_busy": health["commit_seconds"] / elapsed,
        "cpu_main_cores": (cpu_after[0] - cpu_before[0]) / elapsed,
        "cpu_workers_cores": (cpu_after[1] - cpu_before[1]) / elapsed,
        # CPU seconds of the receiver (main process and decode workers) per thousand committed spans: the figure
        # that holds on a shared machine, where wall-clock throughput follows the neighbours' load.
        "cpu_ms_per_1k_spans": (sum(cpu_after) - sum(cpu_before)) / max(acked, 1) * 1e6,
        # The clients share the machine's cores with the receiver: a costlier client leaves it less CPU.
        "client_cpu_ms_per_1k_spans": sum(r["cpu_s"] for r in results) / max(acked, 1) * 1e6,
        "writer_stage_seconds": health["commit_stage_seconds"],
        "duplicate_queries": health.get("duplicate_queries"),
    }


def ceiling(spans: int, lineage: bool, seconds: float = 3.0) -> float:
    from otel_agent.fold.decode import PROTOBUF, decode_payload
    from otel_agent.fold.redact import Redactor

    payloads = [make_request(spans, time.time_ns() + i * 10**10, 9_000 + i, lineage=lineage) for i in range(8)]
    redactor = Redactor()
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        decode_payload("traces", PROTOBUF, payloads[n % len(payloads)], redactor, None, 0)
        n += 1
    return n * spans / (time.perf_counter() - t0)


def start_profile(pid: int, args: argparse.Namespace, out: str) -> subprocess.Popen:
    """py-spy sampling the receiver's main process (every thread, native frames) for the phase's measured part,
    written as collapsed stacks (``OUT.txt``, one line per stack, thread name first) for
    ``bench/profile_summary.py``-style aggregation, or any flame-graph tool."""
    cmd = ["py-spy", "record", "--pid", str(pid), "--duration", str(int(args.duration)),
           "--rate", "97", "--threads", "--format", "raw", "--output", out + ".txt", "--nonblocking"]  # fmt: skip
    if args.profile_native:
        cmd.remove("--nonblocking")  # py-spy samples native stacks only with the process paused
        cmd.append("--native")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def describe(r: dict) -> str:
    text = (
        f"{r['phase']:>8} offered={r['offered_rate']!s:>6}  "
        f"committed={r['committed_spans_per_s']:>9,.0f} spans/s  "
        f"p50={r['p50_ms']:.1f} ms  p99={r['p99_ms']:.1f} ms  retries={r['retries']}  "
        f"stored={r['stored_spans']:,}/{r['acked_spans']:,} acked  peak RSS={r['receiver_peak_rss_mb']:.0f} MB "
        f"(main process {r['receiver_main_peak_rss_mb']:.0f} MB; PSS {r['receiver_peak_pss_mb']:.0f} MB)  "
        f"CPU cores: receiver {r['cpu_main_cores']:.2f} + decode workers {r['cpu_workers_cores']:.2f} "
        f"({r['cpu_ms_per_1k_spans']:.1f} CPU ms per 1k spans; clients {r['client_cpu_ms_per_1k_spans']:.1f})"
    )
    if r["commits"] is not None:
        stages = ", ".join(
            f"{k} {v / max(r['stored_spans'], 1) * 1e6:.1f}" for k, v in r["writer_stage_seconds"].items()
        )
        text += f"  commits={r['commits']} writer busy={r['writer_busy']:.0%} (ms per 1k spans: {stages})"
        text += f"  duplicate queries={r['duplicate_queries']}"
    if r["ran_out_of_requests"]:
        text += "  (clients ran out of pre-encoded requests: raise --max-rate)"
    return text


def throughput_ratios(rounds: list[dict], ours: str, other: str) -> list[float]:
    """Per round, phase ``ours``' committed spans/s over phase ``other``'s (same clients and payload)."""
    return [r[ours]["committed_spans_per_s"] / r[other]["committed_spans_per_s"] for r in rounds]


def each_round(values: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in values)


PACED_TARGET_RATE = 20_000
"""Issue 16's paced latency target is set at this offered rate."""


def print_targets(summary: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    """Issue 16's targets, each PASS or MISS on the medians over the rounds (or why it was not measured)."""
    ratios = summary.get("ratios", {})
    grpc, paced = summary.get("grpc"), summary.get("paced")

    def check(name: str, value: float | None, ok: bool, shown: str, missing: str) -> None:
        verdict = "not measured" if value is None else ("PASS" if ok else "MISS")
        print(f"  {verdict:>12}  {name}: {shown if value is not None else missing}")

    print(f"targets (issue 16), medians of {args.rounds} round(s):")
    ratio = ratios.get("grpc_over_baseline")
    check("gRPC over the baseline >= 1.7x", ratio, ratio is not None and ratio >= 1.7,
          f"{ratio or 0:.2f}x", "needs phases baseline,grpc")  # fmt: skip
    rate = grpc["committed_spans_per_s"] if grpc else None
    check(">= 55,000 spans/s committed over gRPC", rate, rate is not None and rate >= 55_000,
          f"{rate or 0:,.0f} spans/s", "needs phase grpc")  # fmt: skip
    over = ratios.get("http_over_grpc")
    check("HTTP/protobuf within 10 % of gRPC", over, over is not None and over >= 0.9,
          f"{over or 0:.2f}x", "needs phases grpc,http")  # fmt: skip
    p99 = grpc["p99_ms"] if grpc else None
    check("p99 <= 250 ms at full load (gRPC)", p99, p99 is not None and p99 <= 250,
          f"{p99 or 0:.0f} ms", "needs phase grpc")  # fmt: skip
    paced_p99 = paced["p99_ms"] if paced and args.paced_rate == PACED_TARGET_RATE else None
    kept_up = paced is not None and paced["committed_spans_per_s"] >= 0.95 * args.paced_rate
    shown = f"{paced_p99 or 0:.0f} ms"
    if paced is not None and not kept_up:
        shown += f" (and only {paced['committed_spans_per_s']:,.0f} of {args.paced_rate:,.0f} spans/s committed)"
    check(f"p99 <= 150 ms paced at {PACED_TARGET_RATE:,} spans/s", paced_p99,
          paced_p99 is not None and kept_up and paced_p99 <= 150, shown,
          f"needs phase paced at --paced-rate {PACED_TARGET_RATE}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--inflight", type=int, default=2, help="requests in flight per client")
    ap.add_argument("--spans", type=int, default=512, help="spans per request")
    ap.add_argument(
        "--phases",
        default="baseline,grpc,http,paced",
        help="comma list of baseline, grpc, grpc-ref, grpc-python, http, paced, paced-ref (in order)",
    )
    ap.add_argument("--ref", default="", help="checkout whose code the *-ref phases run (e.g. /work/main)")
    ap.add_argument("--rounds", type=int, default=3, help="run the phases this many times; medians are reported")
    ap.add_argument("--paced-rate", type=float, default=20_000)
    ap.add_argument("--max-rate", type=float, default=70_000, help="sizes the pre-encoded pool for max phases")
    ap.add_argument("--warmup-s", type=float, default=1.0)
    ap.add_argument("--receiver-args", default="", help="extra arguments for otel-agent serve")
    ap.add_argument(
        "--ref-receiver-args",
        default=None,
        help="--receiver-args of the *-ref phases (default: the same); with --ref . this A/Bs a setting",
    )
    ap.add_argument("--json", action="store_true", help="print results as JSON too")
    ap.add_argument(
        "--lineage",
        action="store_true",
        help="one span in ten an evidence record, one in fifty a retrieval span with documents",
    )
    ap.add_argument("--latency-log", default="", help="write each request's start offset and latency to PATH.*.tsv")
    ap.add_argument("--profile", default="", help="py-spy the receiver during --profile-phase into PATH.<phase>.txt")
    ap.add_argument("--profile-phase", default="grpc")
    ap.add_argument("--profile-native", action="store_true", help="py-spy --native (C frames too; costlier)")
    ap.add_argument("--no-ceiling", action="store_true", help="skip the single-thread decode ceiling")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="otel-agent-bench-")
    phases = args.phases.split(",")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}", flush=True)
    rounds: list[dict[str, dict]] = []
    for n in range(args.rounds):
        row: dict[str, dict] = {}
        for phase in phases:
            rate = args.paced_rate if phase.startswith("paced") else 0.0
            row[phase] = run_phase(phase, args, rate, tmp, n)
            print(f"[{n + 1}] " + describe(row[phase]), flush=True)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(tmp, f"{phase}-{int(rate)}-{n}.duckdb"))
        for ours in ("grpc", "grpc-ref", "grpc-python"):
            if "baseline" in row and ours in row:
                ratio = row[ours]["committed_spans_per_s"] / row["baseline"]["committed_spans_per_s"]
                print(f"[{n + 1}] same-run ratio {ours} / baseline: {ratio:.2f}x", flush=True)
        rounds.append(row)
    shutil.rmtree(tmp, ignore_errors=True)  # each phase's store is gone already; its directory too
    print(f"median of {args.rounds} round(s), load average now {os.getloadavg()[0]:.2f}:")
    summary: dict[str, dict[str, float]] = {}
    for phase in phases:
        runs = [r[phase] for r in rounds]
        keys = ("committed_spans_per_s", "p50_ms", "p99_ms", "cpu_ms_per_1k_spans")
        summary[phase] = {k: median([r[k] for r in runs]) for k in keys}
        m = summary[phase]
        print(
            f"  {phase:>8}: {m['committed_spans_per_s']:>9,.0f} spans/s  p50 {m['p50_ms']:.0f} ms  "
            f"p99 {m['p99_ms']:.0f} ms  {m['cpu_ms_per_1k_spans']:.1f} CPU ms per 1k spans"
        )
    ratios = summary.setdefault("ratios", {})
    if "baseline" in phases and "grpc" in phases:
        grpc = throughput_ratios(rounds, "grpc", "baseline")
        cpu = [r["baseline"]["cpu_ms_per_1k_spans"] / r["grpc"]["cpu_ms_per_1k_spans"] for r in rounds]
        ratios.update(grpc_over_baseline=median(grpc), baseline_cpu_over_grpc_cpu=median(cpu))
        print(
            f"  same-run throughput ratio grpc / baseline: {median(grpc):.2f}x (rounds: {each_round(grpc)}); "
            f"CPU per span baseline / ours: {median(cpu):.2f}x"
        )
    if "baseline" in phases and "grpc-python" in phases:
        python = ratios["grpc_python_over_baseline"] = median(throughput_ratios(rounds, "grpc-python", "baseline"))
        print(f"  same-run ratio grpc-python (the Python fold) / baseline: {python:.2f}x")
    for ours in ("grpc", "paced", "http"):
        if ours in phases and f"{ours}-ref" in phases:
            vs_ref = throughput_ratios(rounds, ours, f"{ours}-ref")
            p99 = [r[ours]["p99_ms"] / r[f"{ours}-ref"]["p99_ms"] for r in rounds]
            ratios[f"{ours}_over_ref"] = median(vs_ref)
            print(
                f"  same-run ratio {ours} / {ours}-ref ({args.ref}): throughput {median(vs_ref):.2f}x "
                f"(rounds: {each_round(vs_ref)}), p99 {median(p99):.2f}x"
            )
    if "http" in phases and "grpc" in phases:
        http = ratios["http_over_grpc"] = median(throughput_ratios(rounds, "http", "grpc"))
        print(f"  same-run ratio http / grpc: {http:.2f}x")
    print_targets(summary, args)
    if not args.no_ceiling:
        ceil = ceiling(args.spans, args.lineage)
        print(f"ceiling (decode + fold, one process, one thread): {ceil:,.0f} spans/s")
        for phase in phases:
            print(f"  {phase}: {summary[phase]['committed_spans_per_s'] / ceil:.2f}x the ceiling")
    if args.json:
        print(json.dumps({"rounds": rounds, "median": summary}, indent=2))


if __name__ == "__main__":
    main()
