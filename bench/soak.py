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

import duckdb
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request
from ingest import TRACE_EXPORT, ReceiverProcess

MILLION = 1_000_000


def client_main(
    port: int, seed: int, spans: int, inflight: int, quota: int, lat_out: mp.Queue, with_lineage: bool = True
) -> None:
    import grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    parent = os.getppid()

    def exit_when_orphaned() -> None:  # a soak stopped by a signal must not leave its clients retrying
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=exit_when_orphaned, daemon=True).start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
    call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
    lock = threading.Lock()
    state = {"sent": 0}
    requests = quota // spans

    def worker(k: int) -> None:
        marker = f"_{seed * 1000 + k}_"
        template = ExportTraceServiceRequest.FromString(
            make_request(spans, time.time_ns(), seed * 1000 + k, spacing_ns=20_000, lineage=with_lineage)
        )
        all_spans = [s for rs in template.resource_spans for ss in rs.scope_spans for s in ss.spans]
        lineage = [s for s in all_spans if any(a.key == "otel_agent.record.kind" for a in s.attributes)]
        t_first = min(s.start_time_unix_nano for s in all_spans)
        n, latencies = 0, []
        while True:
            with lock:
                if state["sent"] >= requests:
                    break
                state["sent"] += 1
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
            while True:
                try:
                    call(body, timeout=60)
                    break
                except grpc.RpcError as exc:
                    if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                        raise
                    time.sleep(0.05)
            latencies.append((time.time(), time.perf_counter() - t0))
            if len(latencies) >= 20:
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


STAGE_COLUMNS = ("prepare", "duplicates", "insert", "commit", "checkpoint")
"""The writer's stages (/healthz commit_stage_seconds), printed per report as wall ms per 1,000 spans of that
window: where the writer's time goes as the store grows. Beside them the CPU the receiver's main process and its
decode workers spent per 1,000 spans of the window: a wall-clock stage that grows while the CPU per span does not
is waiting (for a core, the GIL or the disk), not doing more work."""


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
        "--plain",
        action="store_true",
        help="the plain mix (no evidence records or retrieval documents, so no lineage_keys rows); default: the "
        "--lineage mix of bench/ingest.py",
    )
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="otel-agent-soak-")
    db = os.path.join(tmp, "soak.duckdb")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}", flush=True)
    receiver = ReceiverProcess(db, args.receiver_args.split())
    ctx = mp.get_context("spawn")
    lat_q: mp.Queue = ctx.Queue()
    quota = args.spans // args.clients
    procs = [
        ctx.Process(
            target=client_main,
            args=(receiver.grpc_port, c + 1, args.request_spans, args.inflight, quota, lat_q, not args.plain),
        )
        for c in range(args.clients)
    ]
    for p in procs:
        p.start()
    root = psutil.Process(receiver.proc.pid)
    latencies: list[tuple[float, float]] = []
    target = args.spans // args.request_spans // args.clients * args.request_spans * args.clients
    mark, t_mark, first_rate = args.every, time.time(), None
    stage_heads = " ".join(f"{name[:8]:>8}" for name in STAGE_COLUMNS)
    print(
        f"{'spans':>12} {'spans/s':>9} {'p99 ms':>8} {'RSS MB':>8} {'PSS MB':>8} {'file B/span':>12}   "
        f"writer ms per 1,000 spans: {stage_heads} {'dup-qry':>7}   CPU ms per 1,000 spans: {'main':>6} {'decode':>6}",
        flush=True,
    )
    done, rate = 0, 0.0
    stages_mark, dupq_mark = dict.fromkeys(STAGE_COLUMNS, 0.0), 0
    cpu_mark = (cpu_seconds(root), sum(cpu_seconds(p) for p in root.children(recursive=True)))  # after start-up
    while done < target:
        time.sleep(0.5)
        while not lat_q.empty():
            latencies += lat_q.get()
        h = health(receiver.http_port)
        done = int(h["items_committed"])
        if done >= min(mark, target):
            now = time.time()
            procs_all = [root, *root.children(recursive=True)]
            rss = sum(p.memory_info().rss for p in procs_all)
            pss = sum(p.memory_full_info().pss for p in procs_all)
            cpu_now = (cpu_seconds(root), sum(cpu_seconds(p) for p in procs_all[1:]))
            window = sorted(dt for when, dt in latencies if when >= t_mark)
            p99 = window[int(len(window) * 0.99)] * 1000 if window else float("nan")
            rate = args.every / (now - t_mark)
            first_rate = first_rate or rate
            stages = h["commit_stage_seconds"]
            cpu_k = " ".join(f"{(a - b) * 1e6 / args.every:>6.1f}" for a, b in zip(cpu_now, cpu_mark, strict=True))
            per_k = " ".join(f"{(stages[name] - stages_mark[name]) * 1e6 / args.every:>8.2f}" for name in STAGE_COLUMNS)
            print(
                f"{done:>12,} {rate:>9,.0f} {p99:>8.0f} {rss / 2**20:>8.0f} {pss / 2**20:>8.0f} "
                f"{store_bytes(db) / done:>12.0f}   {'':>26} {per_k} {h['duplicate_queries'] - dupq_mark:>7}   "
                f"{'':>23}{cpu_k}",
                flush=True,
            )
            stages_mark, dupq_mark = {name: stages[name] for name in STAGE_COLUMNS}, h["duplicate_queries"]
            cpu_mark = cpu_now
            latencies = [x for x in latencies if x[0] >= now]
            mark, t_mark = mark + args.every, now
    for p in procs:
        p.join()
    receiver.stop()
    print(
        f"last report's throughput / first's: {rate / (first_rate or 1):.2f}; file {store_bytes(db) / done:.0f} B/span"
    )
    print(f"load average now {os.getloadavg()[0]:.2f}", flush=True)
    derived_queries(db)
    if args.keep:
        shutil.move(db, args.keep)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
