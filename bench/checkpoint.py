"""Checkpoint cost as a store grows, by row-group size: why stores are attached with ROW_GROUP_SIZE 8192.

A DuckDB checkpoint runs inside the commit that crosses ``checkpoint_threshold``, so every export waiting on that
commit waits for it: its duration is the tail of export latency. This appends the benchmark's realistic agent
spans (bench/agent_spans.py, through the receiver's own fold) in 512-span transactions and checkpoints after
every ``--per-checkpoint`` spans, printing each checkpoint's duration, for DuckDB's default row group (122,880
rows) and for smaller ones.

    python bench/checkpoint.py                      # 10 checkpoints of 40,960 spans each
    python bench/checkpoint.py --sizes 122880,8192 --rounds 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.store.statements import ddl


def run(row_group_size: int, tables: list, per: int, rounds: int, tmp: str) -> list[float]:
    path = os.path.join(tmp, f"rg{row_group_size}.duckdb")
    con = duckdb.connect(config={"checkpoint_threshold": "100GB"})
    con.execute(f"ATTACH ? AS store (ROW_GROUP_SIZE {int(row_group_size)})", [path])
    con.execute("USE store")
    for stmt in ddl("schema"):
        con.execute(stmt.sql)
    durations = []
    n = 0
    for _ in range(rounds):
        for _ in range(per):
            con.register("incoming", tables[n % len(tables)])
            con.execute("BEGIN")
            con.execute("INSERT INTO spans BY NAME SELECT * FROM incoming")
            con.execute("COMMIT")
            n += 1
        t0 = time.perf_counter()
        con.execute("CHECKPOINT")
        durations.append((time.perf_counter() - t0) * 1000)
    con.close()
    return durations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="122880,16384,8192", help="row-group sizes to compare")
    ap.add_argument("--per-checkpoint", type=int, default=40_960, help="spans appended between checkpoints")
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    redactor = Redactor()
    payloads = [make_request(512, time.time_ns() + i * 10**9, 9_000 + i) for i in range(64)]
    tables = [decode_payload("traces", PROTOBUF, p, redactor, None, 0).tables["spans"] for p in payloads]
    per = max(1, args.per_checkpoint // 512)
    print(f"{per * 512:,} spans per checkpoint, {args.rounds} checkpoints; duration of each in ms:")
    with tempfile.TemporaryDirectory(prefix="otel-agent-ckpt-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            d = run(size, tables, per, args.rounds, tmp)
            print(
                f"  ROW_GROUP_SIZE {size:>7,}: median {statistics.median(d):6.0f}  max {max(d):6.0f}   "
                + " ".join(f"{x:.0f}" for x in d)
            )


if __name__ == "__main__":
    main()
