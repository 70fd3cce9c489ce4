"""How long after its acknowledgement a new run is listed by the runs view (issue 31: "a run is listed within 2 s
of its commit"), on a live receiver taking ingest at a steady rate.

A real ``otel-agent serve`` on a new DuckDB file; --clients threads send third-party GenAI traces
(bench/genai_spans.py, 64 traces of ~8 spans a request) over OTLP/HTTP, together at --rate spans/s (0: as fast as
they can). After --warmup seconds, every --every seconds a probe sends one new trace (one run) and, from its
acknowledgement, polls the query API (``SELECT count(*) FROM runs WHERE run_id = ?``) every 50 ms until the run
is listed. Printed: each probe's lag, then the median and the maximum, the rate achieved, the load average, and
the receiver's ``derived`` figures (steps, their duration, the backlog).

    python bench/freshness.py --rate 5000 --probes 9
    python bench/freshness.py --rate 0 --probes 9      # full ingest
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from genai_spans import make_request

from otel_agent.query.api_client import ReceiverClient

SPANS_PER_REQUEST = 64 * 8


def start_receiver(db: Path, extra: list[str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "otel_agent",
            "serve",
            "--db",
            str(db),
            "--grpc-endpoint",
            "127.0.0.1:0",
            "--http-endpoint",
            "127.0.0.1:0",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "receiving OTLP" in line:
            url = line.split(" and ")[1].split()[0]
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # drain
            return proc, url
    raise SystemExit("the receiver did not start")


def sender(url: str, rate_per_client: float, stop: threading.Event, sent: list[int], seed: int) -> None:
    rnd = random.Random(seed)
    session = requests.Session()
    start = time.time_ns() - 3_600 * 10**9
    began, n = time.monotonic(), 0
    while not stop.is_set():
        body = make_request(rnd, 64, start + n * 10**9, 10**7, "helpdesk")
        reply = session.post(f"{url}/v1/traces", data=body, headers={"Content-Type": "application/x-protobuf"})
        if reply.status_code == 200:
            n += 1
            sent[0] += SPANS_PER_REQUEST
        if rate_per_client > 0:
            ahead = began + n * SPANS_PER_REQUEST / rate_per_client - time.monotonic()
            if ahead > 0:
                stop.wait(ahead)


def probe(url: str, api: ReceiverClient, no: int, timeout_s: float) -> float | None:
    rnd = random.Random(10_000 + no)
    body = make_request(rnd, 1, time.time_ns() - 10**9, 10**7, "probe")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest.FromString(body)
    run_id = req.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
    requests.post(f"{url}/v1/traces", data=body, headers={"Content-Type": "application/x-protobuf"}).raise_for_status()
    acked = time.monotonic()
    while time.monotonic() - acked < timeout_s:
        if api.query("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).rows[0][0]:
            return time.monotonic() - acked
        time.sleep(0.05)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=5000, help="spans/s in all (0: as fast as the clients can)")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--probes", type=int, default=9)
    ap.add_argument("--every", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--receiver-args", default="")
    args = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {os.getloadavg()}; rate {args.rate}")
    with tempfile.TemporaryDirectory(prefix="otel-agent-fresh-") as tmp:
        proc, url = start_receiver(Path(tmp) / "fresh.duckdb", args.receiver_args.split())
        api = ReceiverClient(url)
        stop, sent = threading.Event(), [0]
        threads = [
            threading.Thread(target=sender, args=(url, args.rate / args.clients, stop, sent, i), daemon=True)
            for i in range(args.clients)
        ]
        began = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(args.warmup)
        lags: list[float | None] = []
        for no in range(args.probes):
            lag = probe(url, api, no, args.timeout)
            lags.append(lag)
            shown = f">{args.timeout:.0f} s" if lag is None else f"{lag:.2f} s"
            print(f"  probe {no}: {shown}", flush=True)
            time.sleep(max(0.0, args.every - (lag or 0)))
        elapsed = time.monotonic() - began
        stop.set()
        derived = requests.get(f"{url}/healthz").json().get("derived", {})
        proc.terminate()
        proc.wait(60)
    got = [x for x in lags if x is not None]
    print(f"lag: median {statistics.median(got):.2f} s, max {max(got):.2f} s" if got else "lag: none listed")
    print(f"ingest {sent[0] / elapsed:,.0f} spans/s; load average {os.getloadavg()}")
    print(
        "derived:",
        {
            k: derived.get(k)
            for k in ("steps", "rows_folded", "step_seconds", "max_step_ms", "recent_step_ms", "backlog_rows", "lag_s")
        },
    )


if __name__ == "__main__":
    main()
