"""Soak: --spans (default 10 M) into one store at full rate through a real ``otel-agent serve``, reporting each
million as it completes — throughput, p99 export latency, receiver RSS/PSS, store bytes per span — then the
derived queries of bench/derive.py and bench/derive_evidence.py (a run's rollup, provider_health, one claim's
lineage, receipts) timed on the result.

Clients cannot pre-encode 10 M spans (≈ 6 GB), and building each request anew costs them as much CPU as the
receiver spends storing it. So each client keeps a few templates (bench/agent_spans.py, the --lineage mix) as
parsed messages and, per request, gives every span new trace/span ids (parents and links follow), shifts its
times forward and renames its run and evidence ids: ≈ 5 CPU ms per 1,000 spans, and every span unique.

    python bench/soak.py                          # 10 M spans
    python bench/soak.py --spans 2000000 --keep /tmp/soak.duckdb
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
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
from ingest import TRACE_EXPORT, ReceiverProcess, from_checkout

MILLION = 1_000_000


def client_main(
    port: Any, stop: Any, seed: int, spans: int, inflight: int, lat_out: mp.Queue, with_lineage: bool = True
) -> None:
    """One client process: ``inflight`` threads, each sending a request and waiting for its reply, to the receiver
    whose gRPC port ``port`` (a shared value) holds at that moment, until ``stop`` is set."""
    import grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    parent = os.getppid()

    def exit_when_orphaned() -> None:  # a soak stopped by a signal must not leave its clients retrying
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=exit_when_orphaned, daemon=True).start()
    calls: dict[int, Any] = {}
    calls_lock = threading.Lock()

    def call_for(target: int) -> Any:
        with calls_lock:
            if target not in calls:
                channel = grpc.insecure_channel(
                    f"127.0.0.1:{target}", options=[("grpc.max_send_message_length", 64 << 20)]
                )
                calls[target] = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
            return calls[target]

    def worker(k: int) -> None:
        marker = f"_{seed * 1000 + k}_"
        template = ExportTraceServiceRequest.FromString(
            make_request(spans, time.time_ns(), seed * 1000 + k, spacing_ns=20_000, lineage=with_lineage)
        )
        all_spans = [s for rs in template.resource_spans for ss in rs.scope_spans for s in ss.spans]
        lineage = [s for s in all_spans if any(a.key == "otel_agent.record.kind" for a in s.attributes)]
        t_first = min(s.start_time_unix_nano for s in all_spans)
        n, latencies = 0, []
        while not stop.is_set():
            n += 1
            shift = time.time_ns() - t_first
            ids = {s.span_id: os.urandom(8) for s in all_spans}
            traces: dict[bytes, bytes] = {}
            new_marker = f"_{seed}x{k}x{n}_"
            for s in all_spans:
                s.trace_id = traces.setdefault(s.trace_id, os.urandom(16))
                s.span_id = ids[s.span_id]
                if s.parent_span_id:
                    s.parent_span_id = ids.get(s.parent_span_id, s.parent_span_id)
                s.start_time_unix_nano += shift
                s.end_time_unix_nano += shift
                t_first_span = s.attributes[0]
                if t_first_span.key == "otel_agent.run.id":
                    t_first_span.value.string_value = f"run-{seed}-{k}-{n // 4}"
            for s in lineage:
                for a in s.attributes:
                    if a.value.HasField("string_value") and marker in a.value.string_value:
                        a.value.string_value = a.value.string_value.replace(marker, new_marker)
            marker = new_marker
            t_first += shift
            body = template.SerializeToString()
            t0 = time.perf_counter()
            while not stop.is_set():
                try:
                    call_for(port.value)(body, timeout=60)
                    break
                except grpc.RpcError as exc:
                    if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                        raise
                    time.sleep(0.05)
            latencies.append((time.time(), time.perf_counter() - t0))
            if len(latencies) >= 20 or time.time() - latencies[0][0] > 0.5:
                lat_out.put(latencies)
                latencies = []
        if latencies:
            lat_out.put(latencies)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(inflight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def store_bytes(db: str) -> int:
    return sum(os.path.getsize(p) for p in (db, db + ".wal") if os.path.exists(p))


def health(port: int) -> dict:
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).read())


STAGE_COLUMNS = ("prepare", "duplicates", "insert", "commit", "checkpoint", "recycle")
"""The writer's stages (/healthz commit_stage_seconds), printed per report as wall ms per 1,000 spans of that
window: where the writer's time goes as the store grows; then the writer thread's own CPU time in each stage
(/healthz commit_stage_cpu_seconds). Beside them the CPU the receiver's main process and its decode workers spent
per 1,000 spans of the window. A wall-clock stage that grows while its CPU per span does not is waiting (for a core,
the GIL or the disk), not doing more work. ``re-att``: times the writer has re-attached the store so far (/healthz
store_reattaches; otel_agent/store/recycle.py)."""


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def derived_queries(db: str) -> None:
    from otel_agent.store.database import open_store

    open_store(db).close()
    con = duckdb.connect(db, read_only=True)
    run_id = con.execute(
        "SELECT attributes->>'otel_agent.run.id' FROM spans WHERE attributes->>'otel_agent.run.id' IS NOT NULL "
        "LIMIT 1 OFFSET 1000"
    ).fetchall()[0][0]
    claim = con.execute(
        "SELECT attributes->>'otel_agent.claim.id' FROM spans "
        "WHERE attributes->>'otel_agent.record.kind' = 'claim' LIMIT 1 OFFSET 100"
    ).fetchall()
    cases = [
        ("one run's rollup (runs_for_run)", "SELECT * FROM runs_for_run(?)", [run_id]),
        ("provider_health over all", "SELECT * FROM provider_health", []),
        ("cost_breakdown for one run", "SELECT * FROM cost_breakdown_for_run(?)", [run_id]),
        ("receipt_state (view)", "SELECT * FROM receipt_state", []),
    ]
    if claim:
        cases.insert(2, ("one claim's lineage (claim_lineage_of)", "SELECT * FROM claim_lineage_of(?)", [claim[0][0]]))
    print(f"\nderived queries on the store ({con.execute('SELECT count(*) FROM spans').fetchall()[0][0]:,} spans):")
    for label, sql, params in cases:
        times = []
        for _ in range(4):
            cur = con.cursor()
            t0, c0 = time.perf_counter(), time.process_time()
            rows = cur.execute(sql, params).fetchall()
            times.append((time.perf_counter() - t0, time.process_time() - c0, len(rows)))
            cur.close()
        wall, cpu, nrows = sorted(times[1:])[1]
        print(f"  {label:<42} {wall * 1000:9.1f} ms  (CPU {cpu * 1000:.0f} ms)  {nrows} rows", flush=True)
    con.close()


def run_slice(target: ReceiverProcess, port: Any, lat_q: mp.Queue, spans: int) -> tuple[int, int, float, float]:
    """Send the clients' load to ``target`` until it has committed ``spans`` more: (committed before, after,
    seconds, p99 ms of the replies that started after the previous target's last ones)."""
    before = int(health(target.http_port)["items_committed"])
    port.value = target.grpc_port
    t0 = time.time()
    done, latencies = before, []
    while done - before < spans:
        time.sleep(0.2)
        done = int(health(target.http_port)["items_committed"])
        while not lat_q.empty():
            latencies += lat_q.get()
    window = sorted(dt for when, dt in latencies if when >= t0 + 0.5)
    return before, done, time.time() - t0, window[int(len(window) * 0.99)] * 1000 if window else float("nan")


def reference_phases(
    soaked: ReceiverProcess,
    fresh: ReceiverProcess,
    port: Any,
    lat_q: mp.Queue,
    spans: int,
    slice_spans: int,
    soaked_label: str = "soaked",
) -> tuple[float, float]:
    """The same-run reference: the clients' load goes to a new store (``fresh``) and to the soaked one in turn,
    ``slice_spans`` at a time, until each has taken ``spans``; prints each slice and returns (soaked, new) spans/s
    over all their slices. Alternating in the same minutes takes the machine's drift (±20-35 % over a soak on this
    machine) out of the comparison that the first-against-last ratio cannot."""
    print(
        f"\nsame-run reference: {spans:,} spans to a new store and {spans:,} more to the soaked one, in alternating "
        f"slices of {slice_spans:,}",
        flush=True,
    )
    print(f"{'store':>8} {'spans before':>13} {'spans/s':>9} {'p99 ms':>8}", flush=True)
    taken = {"new": [0, 0.0], soaked_label: [0, 0.0]}
    while min(n for n, _ in taken.values()) < spans:
        for label, target in (("new", fresh), (soaked_label, soaked)):
            if taken[label][0] >= spans:
                continue
            before, done, elapsed, p99 = run_slice(target, port, lat_q, slice_spans)
            taken[label][0] += done - before
            taken[label][1] += elapsed
            print(f"{label:>8} {before:>13,} {(done - before) / elapsed:>9,.0f} {p99:>8.0f}", flush=True)
    soaked_rate, new_rate = (n / t for n, t in (taken[soaked_label], taken["new"]))
    return soaked_rate, new_rate


def paired_soak(
    ours: ReceiverProcess, ref: ReceiverProcess, port: Any, lat_q: mp.Queue, args: argparse.Namespace
) -> None:
    """``--ref``: this checkout's receiver and the ``--ref`` checkout's, each into its own store, take the load in
    alternating slices until each holds ``--spans``; each million of each store is reported as it completes (its
    spans/s over the slices that wrote it). Both grow in the same minutes, so the comparison of their profiles is
    free of the machine's drift: an A/B of a change to how the store ages."""
    print(f"paired soak: ours (this checkout) and ref ({args.ref}), alternating slices of {args.slice:,} spans")
    print(f"{'store':>6} {'spans':>12} {'spans/s':>9} {'p99 ms':>8}", flush=True)
    rates: dict[str, list[float]] = {"ours": [], "ref": []}
    window = {"ours": [0, 0.0, 0.0], "ref": [0, 0.0, 0.0]}  # spans, seconds, worst slice p99 of this million
    while min(len(r) for r in rates.values()) < args.spans // args.every:
        for label, target in (("ours", ours), ("ref", ref)):
            before, done, elapsed, p99 = run_slice(target, port, lat_q, args.slice)
            w = window[label]
            w[0], w[1], w[2] = w[0] + done - before, w[1] + elapsed, max(w[2], p99)
            if w[0] >= args.every:
                rates[label].append(w[0] / w[1])
                print(f"{label:>6} {done:>12,} {w[0] / w[1]:>9,.0f} {w[2]:>8.0f}", flush=True)
                window[label] = [0, 0.0, 0.0]
    for label, r in rates.items():
        print(f"{label}: last million / first: {r[-1] / r[0]:.2f}; last / best: {r[-1] / max(r):.2f}")
    by_million = " ".join(f"{a / b:.2f}" for a, b in zip(rates["ours"], rates["ref"], strict=True))
    print(f"ours / ref, million by million: {by_million}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=10 * MILLION)
    ap.add_argument("--every", type=int, default=MILLION, help="report each this many spans")
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--inflight", type=int, default=4, help="requests in flight per client")
    ap.add_argument("--request-spans", type=int, default=512)
    ap.add_argument("--receiver-args", default="")
    ap.add_argument("--keep", default="", help="keep the store at this path")
    ap.add_argument(
        "--reference",
        type=int,
        default=MILLION,
        help="spans of the same-run reference after the soak: this many to a new store and as many more to the "
        "soaked one, alternating (0: none)",
    )
    ap.add_argument(
        "--restarted-reference",
        action="store_true",
        help="after the same-run reference, stop the soaked receiver, start a new process on its store and run the "
        "reference again: what is left is the store's size (its file, its row groups), not the process's state "
        "(DuckDB's buffer pool and allocator, Python's heap)",
    )
    ap.add_argument("--slice", type=int, default=250_000, help="spans per slice of the same-run reference and of --ref")
    ap.add_argument(
        "--ref",
        default="",
        help="a checkout (e.g. a worktree of main) whose receiver soaks beside this one, alternating slices: the "
        "A/B of a change to the profile (paired_soak)",
    )
    ap.add_argument(
        "--ref-receiver-args",
        default=None,
        help="--receiver-args of the --ref side (default: the same); with --ref . this A/Bs a setting",
    )
    ap.add_argument("--no-derived", action="store_true", help="skip timing the derived queries on the result")
    ap.add_argument(
        "--plain",
        action="store_true",
        help="the plain mix (no evidence records or retrieval documents, so no lineage_keys rows); default: the "
        "--lineage mix of bench/ingest.py",
    )
    args = ap.parse_args()
    if args.restarted_reference and not args.reference:
        ap.error("--restarted-reference runs after the same-run reference: it needs --reference > 0")
    tmp = tempfile.mkdtemp(prefix="otel-agent-soak-")
    db = os.path.join(tmp, "soak.duckdb")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}", flush=True)
    receiver = ReceiverProcess(db, args.receiver_args.split())
    ctx = mp.get_context("spawn")
    lat_q: mp.Queue = ctx.Queue()
    port = ctx.Value("i", receiver.grpc_port)
    stop = ctx.Event()
    procs = [
        ctx.Process(
            target=client_main,
            args=(port, stop, c + 1, args.request_spans, args.inflight, lat_q, not args.plain),
        )
        for c in range(args.clients)
    ]
    for p in procs:
        p.start()
    if args.ref:
        ref = ReceiverProcess(
            os.path.join(tmp, "ref.duckdb"),
            (args.receiver_args if args.ref_receiver_args is None else args.ref_receiver_args).split(),
            **from_checkout(args.ref),
        )
        paired_soak(receiver, ref, port, lat_q, args)
        stop.set()
        for p in procs:
            p.join()
        ref.stop()
        receiver.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        return
    root = psutil.Process(receiver.proc.pid)
    latencies: list[tuple[float, float]] = []
    mark, t_mark, first_rate = args.every, time.time(), None
    stage_heads = " ".join(f"{name[:8]:>8}" for name in STAGE_COLUMNS)
    print(
        f"{'spans':>12} {'spans/s':>9} {'p99 ms':>8} {'RSS MB':>8} {'PSS MB':>8} {'file B/span':>12}   "
        f"writer ms per 1,000 spans: {stage_heads} {'dup-qry':>7} {'re-att':>6}   its CPU: {stage_heads}   "
        f"CPU ms per 1,000 spans: {'main':>6} {'decode':>6}",
        flush=True,
    )
    done, done_mark, rate = 0, 0, 0.0
    stages_mark, dupq_mark = dict.fromkeys(STAGE_COLUMNS, 0.0), 0
    stages_cpu_mark = dict.fromkeys(STAGE_COLUMNS, 0.0)
    cpu_mark = (cpu_seconds(root), sum(cpu_seconds(p) for p in root.children(recursive=True)))  # after start-up
    while done < args.spans:
        time.sleep(0.5)
        while not lat_q.empty():
            latencies += lat_q.get()
        h = health(receiver.http_port)
        done = int(h["items_committed"])
        if done >= min(mark, args.spans):
            now = time.time()
            window_spans = done - done_mark
            per_k_spans = window_spans / 1e6
            procs_all = [root, *root.children(recursive=True)]
            rss = sum(p.memory_info().rss for p in procs_all)
            pss = sum(p.memory_full_info().pss for p in procs_all)
            cpu_now = (cpu_seconds(root), sum(cpu_seconds(p) for p in procs_all[1:]))
            window = sorted(dt for when, dt in latencies if when >= t_mark)
            p99 = window[int(len(window) * 0.99)] * 1000 if window else float("nan")
            rate = window_spans / (now - t_mark)
            first_rate = first_rate or rate
            stages, stages_cpu = h["commit_stage_seconds"], h["commit_stage_cpu_seconds"]
            cpu_k = " ".join(f"{(a - b) / per_k_spans:>6.1f}" for a, b in zip(cpu_now, cpu_mark, strict=True))
            per_k = " ".join(f"{(stages[name] - stages_mark[name]) / per_k_spans:>8.2f}" for name in STAGE_COLUMNS)
            cpu_per_k = " ".join(
                f"{(stages_cpu[name] - stages_cpu_mark[name]) / per_k_spans:>8.2f}" for name in STAGE_COLUMNS
            )
            print(
                f"{done:>12,} {rate:>9,.0f} {p99:>8.0f} {rss / 2**20:>8.0f} {pss / 2**20:>8.0f} "
                f"{store_bytes(db) / done:>12.0f}   {'':>26} {per_k} {h['duplicate_queries'] - dupq_mark:>7} "
                f"{h.get('store_reattaches', 0):>6}   "
                f"{'':>9}{cpu_per_k}   {'':>23}{cpu_k}",
                flush=True,
            )
            stages_mark, dupq_mark = {name: stages[name] for name in STAGE_COLUMNS}, h["duplicate_queries"]
            stages_cpu_mark = {name: stages_cpu[name] for name in STAGE_COLUMNS}
            cpu_mark, done_mark = cpu_now, done
            latencies = [x for x in latencies if x[0] >= now]
            mark, t_mark = mark + args.every, now
    print(f"last report's throughput / first's: {rate / (first_rate or 1):.2f} (machine drift included)", flush=True)
    if args.reference:
        fresh = ReceiverProcess(os.path.join(tmp, "reference.duckdb"), args.receiver_args.split())
        soaked_rate, new_rate = reference_phases(receiver, fresh, port, lat_q, args.reference, args.slice)
        print(
            f"soaked store / new store, same minutes: {soaked_rate / new_rate:.2f} "
            f"({soaked_rate:,.0f} against {new_rate:,.0f} spans/s)",
            flush=True,
        )
        if args.restarted_reference:
            receiver.stop()
            receiver = ReceiverProcess(db, args.receiver_args.split())
            restarted_rate, new_rate = reference_phases(
                receiver, fresh, port, lat_q, args.reference, args.slice, soaked_label="restart"
            )
            print(
                f"soaked store in a new process / new store, same minutes: {restarted_rate / new_rate:.2f} "
                f"({restarted_rate:,.0f} against {new_rate:,.0f} spans/s; 'spans before' counts this process's)",
                flush=True,
            )
    stop.set()
    for p in procs:
        p.join()
    if args.reference:
        fresh.stop()
    receiver.stop()
    done = int(duckdb.connect(db, read_only=True).execute("SELECT count(*) FROM spans").fetchall()[0][0])
    print(f"file {store_bytes(db) / done:.0f} B/span; load average now {os.getloadavg()[0]:.2f}", flush=True)
    if not args.no_derived:
        derived_queries(db)
    if args.keep:
        shutil.move(db, args.keep)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
