"""Webhook failures never slow ingest (issue 36 §3): ingest with a webhook that is down, slow or answering 500,
against the same receiver with no webhook.

Each round starts a receiver (this checkout's, in this process) on a new store with one rule that fires for every
new run (an SQL rule over the latest runs, so each evaluation — every --interval s — sends a stream of firing and
resolved events) and one webhook configuration:

  * ``none``: no [webhook] section;
  * ``down``: a closed port on loopback (every attempt refused);
  * ``slow``: a server on loopback that answers after --slow-s seconds (past the 1 s attempt timeout);
  * ``500``: a server on loopback that answers 500 at once.

Every attempt is retried (backoff 50 ms … 1 s, 6 attempts) and recorded, as in production. A client process sends
--spans spans of our instrumentation's shape (bench/derive.py) over OTLP/gRPC; the round's figure is spans/s from
the first request to the last acknowledgement. Configurations alternate for --rounds rounds; printed: each round,
then each configuration's median and its ratio to ``none``, and the webhook's attempts.

    python bench/alerts_webhook.py                     # 100 k spans a round, 3 rounds
    python bench/alerts_webhook.py --spans 300000 --rounds 5
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import alerts as bench_alerts  # bench/alerts.py: the client process and the receiver's start
import derive

RULE = """
[[rule]]
name = "new_runs"
kind = "sql"
query = "SELECT run_id AS key, status FROM runs ORDER BY start_time DESC LIMIT 50"
"""
SECRET_ENV = "OTEL_AGENT_BENCH_WEBHOOK_SECRET"
CONFIGS = ("none", "down", "slow", "500")


def serve(status: int, delay_s: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(delay_s)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rules_text(config: str, servers: dict[str, ThreadingHTTPServer]) -> str:
    if config == "none":
        return RULE
    if config == "down":
        url = f"http://127.0.0.1:{closed_port()}/hook"
    else:
        host, port = servers[config].server_address[:2]
        url = f"http://{host}:{port}/hook"
    return RULE + (
        f'[webhook]\nurl = "{url}"\nsecret_env = "{SECRET_ENV}"\ntimeout = "1s"\nbackoff = "50ms"\n'
        'max_backoff = "1s"\nmax_attempts = 6\n'
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--slow-s", type=float, default=5.0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    os.environ[SECRET_ENV] = "bench-secret"
    servers = {"slow": serve(200, args.slow_s), "500": serve(500, 0.0)}
    work = Path(tempfile.mkdtemp(prefix="otel_agent_webhook_bench_"))
    n_runs = args.spans // derive.SPANS_PER_RUN
    rates: dict[str, list[float]] = {c: [] for c in CONFIGS}
    attempts: dict[str, list[int]] = {c: [] for c in CONFIGS}
    print(f"load average {os.getloadavg()}; {n_runs * derive.SPANS_PER_RUN:,} spans a round, evaluation every "
          f"{args.interval:g} s")  # fmt: skip
    for r in range(args.rounds):
        for config in CONFIGS:
            d = work / f"{config}_{r}"
            d.mkdir()
            (d / "rules.toml").write_text(rules_text(config, servers))
            receiver = bench_alerts.start_receiver(str(d / "s.duckdb"), str(d / "rules.toml"), args.interval)
            try:
                seconds = bench_alerts.send_runs(receiver.grpc_port, 0, n_runs, time.time_ns() - 3600 * 10**9, 10**9)
                hook = receiver.alerts.webhook
                attempts[config].append(hook.stats.attempts if hook else 0)
            finally:
                receiver.stop()
            rate = n_runs * derive.SPANS_PER_RUN / seconds
            rates[config].append(rate)
            print(f"round {r + 1} {config:>5}: {rate:,.0f} spans/s, {attempts[config][-1]} webhook attempts")
    base = statistics.median(rates["none"])
    print(f"\n{'webhook':>8} {'spans/s':>9} {'/ none':>7} {'attempts':>9}   (medians of {args.rounds})")
    for config in CONFIGS:
        median = statistics.median(rates[config])
        print(f"{config:>8} {median:>9,.0f} {median / base:>7.3f} {statistics.median(attempts[config]):>9.0f}")
    for server in servers.values():
        server.shutdown()
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
