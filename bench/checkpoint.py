"""Checkpoint cost as a store grows, by row-group size: why stores are attached with ROW_GROUP_SIZE 8192.

A DuckDB checkpoint runs inside the commit that crosses ``checkpoint_threshold``, so every export waiting on that
commit waits for it: its duration is the tail of export latency. This appends the benchmark's realistic agent
spans (bench/agent_spans.py, through the receiver's own fold) in 512-span transactions and checkpoints after
every ``--per-checkpoint`` spans, printing each checkpoint's duration, for DuckDB's default row group (122,880
rows) and for smaller ones.

    python bench/checkpoint.py                      # 10 checkpoints of 40,960 spans each
    python bench/checkpoint.py --sizes 122880,8192 --rounds 20
    python bench/checkpoint.py --sizes 8192 --at 0,2,5,10   # the same at stores of 0, 2, 5 and 10 M spans

``--at`` fills the store in bulk to each size (millions of spans) and then times three rounds of appending and
checkpointing there: the insert and the checkpoint, wall and whole-process CPU (DuckDB's worker threads run
parts of a checkpoint), medians. A checkpoint also walks every row group of every table, changed or not, so its
cost grows with the store (docs/scale.md, the soak of 2026-12-04).
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
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_spans import make_request

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.store.statements import ddl


def new_store(path: str, row_group_size: int) -> duckdb.DuckDBPyConnection:
    """A store with the schema, attached with ``row_group_size``, that checkpoints only when told to."""
    con = duckdb.connect(config={"checkpoint_threshold": "100GB"})
    con.execute(f"ATTACH ? AS store (ROW_GROUP_SIZE {int(row_group_size)})", [path])
    con.execute("USE store")
    for stmt in ddl("schema"):
        con.execute(stmt.sql)
    return con


def append(con: duckdb.DuckDBPyConnection, table: object) -> None:
    """One 512-span transaction, as the writer commits a request."""
    con.register("incoming", table)
    con.execute("BEGIN")
    con.execute("INSERT INTO spans BY NAME SELECT * FROM incoming")
    con.execute("COMMIT")


def run(row_group_size: int, tables: list, per: int, rounds: int, tmp: str) -> list[float]:
    con = new_store(os.path.join(tmp, f"rg{row_group_size}.duckdb"), row_group_size)
    durations = []
    n = 0
    for _ in range(rounds):
        for _ in range(per):
            append(con, tables[n % len(tables)])
            n += 1
        t0 = time.perf_counter()
        con.execute("CHECKPOINT")
        durations.append((time.perf_counter() - t0) * 1000)
    con.close()
    return durations


def run_at(row_group_size: int, tables: list, per: int, marks: list[int], tmp: str) -> None:
    """``--at``: at each store size in ``marks`` (spans), the median of three rounds of ``per`` 512-span
    transactions then a CHECKPOINT: insert and checkpoint, wall and process CPU, per round."""
    con = new_store(os.path.join(tmp, f"at{row_group_size}.duckdb"), row_group_size)
    bulk = pa.concat_tables(tables)
    con.register("bulk", bulk)
    stored = 0
    for mark in marks:
        while stored < mark:
            con.execute("INSERT INTO spans BY NAME SELECT * FROM bulk")
            stored += bulk.num_rows
        con.execute("CHECKPOINT")
        rounds = []
        for _ in range(3):
            wall, cpu = time.perf_counter(), time.process_time()
            for i in range(per):
                append(con, tables[i % len(tables)])
            inserted = time.perf_counter() - wall, time.process_time() - cpu
            wall, cpu = time.perf_counter(), time.process_time()
            con.execute("CHECKPOINT")
            rounds.append((*inserted, time.perf_counter() - wall, time.process_time() - cpu))
            stored += per * 512
        medians = (statistics.median(r[k] * 1000 for r in rounds) for k in range(4))
        insert_wall, insert_cpu, ckpt_wall, ckpt_cpu = medians
        print(
            f"  ROW_GROUP_SIZE {row_group_size:>7,} at {stored / 1e6:5.2f} M spans: insert {insert_wall:5.0f} ms "
            f"(CPU {insert_cpu:5.0f})  checkpoint {ckpt_wall:5.0f} ms (CPU {ckpt_cpu:5.0f})",
            flush=True,
        )
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="122880,16384,8192", help="row-group sizes to compare")
    ap.add_argument("--per-checkpoint", type=int, default=40_960, help="spans appended between checkpoints")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--at", default="", help="store sizes in millions of spans (e.g. 0,2,5,10): time growth instead")
    args = ap.parse_args()
    redactor = Redactor()
    payloads = [make_request(512, time.time_ns() + i * 10**9, 9_000 + i) for i in range(64)]
    tables = [decode_payload("traces", PROTOBUF, p, redactor, None, 0).tables["spans"] for p in payloads]
    per = max(1, args.per_checkpoint // 512)
    if args.at:
        print(f"{per * 512:,} spans appended then checkpointed, three rounds at each store size; medians:")
        with tempfile.TemporaryDirectory(prefix="otel-agent-ckpt-") as tmp:
            for size in (int(s) for s in args.sizes.split(",")):
                run_at(size, tables, per, [int(float(m) * 1_000_000) for m in args.at.split(",")], tmp)
        return
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
