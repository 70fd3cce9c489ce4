"""The writer alone at a paced load: export latency (submit to acknowledgement) with the checkpoint run by the
writer after a group commit's replies (``after``, the receiver's way) against DuckDB's own inside the COMMIT
(``inline``), alternating in one process, each into a new store. No transport and no decode processes: the
batches are folded before the clock starts.

    python bench/writer_paced.py              # 40 requests/s of 512 spans (20,480 spans/s), 12 s, three pairs
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store


def run(mode: str, args: argparse.Namespace, tmp: str) -> str:
    con = open_store(os.path.join(tmp, f"{mode}-{time.time_ns()}.duckdb"))
    writer = Writer(con, max_inflight_bytes=1 << 40, checkpoints=(None, 0) if mode == "inline" else None)
    n = int(args.rate * args.seconds)
    spacing = int(1e9 / (args.rate * 512))
    base = time.time_ns() + int(60e9)  # live: inside the writer's recent window while it runs
    batches = [
        decode_payload("traces", PROTOBUF, make_request(512, base + i * 512 * spacing, i, spacing_ns=spacing),
                       Redactor(), None, 0)
        for i in range(n)
    ]  # fmt: skip
    latencies: list[float] = []
    lock = threading.Lock()

    def one(batch: object) -> None:
        started = time.perf_counter()
        writer.write(batch)  # type: ignore[arg-type]
        with lock:
            latencies.append((time.perf_counter() - started) * 1000)

    pool = ThreadPoolExecutor(16)
    t0 = time.perf_counter()
    for i, batch in enumerate(batches):
        wait = t0 + i / args.rate - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        pool.submit(one, batch)
    pool.shutdown(wait=True)
    stats = writer.stats
    writer.close()
    con.close()
    latencies.sort()
    work = stats.stage_seconds["commit"] + stats.stage_seconds["checkpoint"]
    return (
        f"{mode:>6}: p50 {latencies[len(latencies) // 2]:.1f} ms  p99 {latencies[int(len(latencies) * 0.99)]:.1f} ms"
        f"  max {latencies[-1]:.1f} ms  COMMIT + checkpoints {work * 1000:.0f} ms ({stats.checkpoints} by the writer)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=40.0, help="512-span requests per second")
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="otel-agent-writer-paced-")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}")
    for _ in range(args.pairs):
        for mode in ("after", "inline"):
            print(run(mode, args, tmp), flush=True)
    print(f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
