"""Checkpoint cost as a store grows, by row-group size: why stores are attached with ROW_GROUP_SIZE 8192.

A DuckDB checkpoint runs inside the commit that crosses ``checkpoint_threshold``, so every export waiting on that
commit waits for it: its duration is the tail of export latency. This appends the benchmark's realistic agent
spans (bench/agent_spans.py, through the receiver's own fold) in 512-span transactions and checkpoints after
every ``--per-checkpoint`` spans, printing each checkpoint's duration, for DuckDB's default row group (122,880
rows) and for smaller ones.

    python bench/checkpoint.py                      # 10 checkpoints of 40,960 spans each
    python bench/checkpoint.py --sizes 122880,8192 --rounds 20
    python bench/checkpoint.py --sizes 8192 --at 0.5,2,5,10 --memory-limit 1GB   # growth up to 10 M spans

``--at`` fills a store the way the writer does (512-span transactions, a checkpoint every ``--per-checkpoint``
spans), alternating round by round with a reference store that starts again at 1 M spans, and reports both as
the store passes each size (millions of spans): the insert and the checkpoint, wall and whole-process CPU
(DuckDB's worker threads run parts of a checkpoint), the process's minor page faults, DuckDB's cached table
data, and the ratio of the two stores' time per round, which the machine's drift does not move. With
``--memory-limit 1GB`` (the receiver's default) each store's buffer pool fills as the receiver's does
(docs/scale.md, 2026-12-05).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

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


FRESH_SPANS = 1_000_000
"""``--at``'s reference store is started again once it holds this many spans: it stands for a store's first million."""


@dataclass
class Growing:
    """A store being filled round by round, and its last three rounds: (insert wall, insert CPU, checkpoint wall,
    checkpoint CPU) in seconds and minor page faults."""

    path: str
    row_group_size: int
    memory_limit: str
    con: duckdb.DuckDBPyConnection | None = None
    stored: int = 0
    rounds: list[tuple[float, ...]] = field(default_factory=list)

    def start(self) -> None:
        if self.con is not None:
            self.close()
            Path(self.path).unlink()
        self.con = new_store(self.path, self.row_group_size)  # its own DuckDB instance, so its own buffer pool
        if self.memory_limit:
            self.con.execute(f"SET memory_limit = '{self.memory_limit}'")
        self.stored = 0  # its rounds stay: with large rounds a restart can come before three of them

    def round(self, tables: list, per: int) -> None:
        """``per`` 512-span transactions, then a CHECKPOINT, timed."""
        assert self.con is not None
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(per):
            append(self.con, tables[(self.stored // 512 + i) % len(tables)])
        inserted = time.perf_counter() - wall, time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        self.con.execute("CHECKPOINT")
        checkpointed = time.perf_counter() - wall, time.process_time() - cpu
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        self.rounds = [*self.rounds[-2:], (*inserted, *checkpointed, faults)]
        self.stored += per * 512

    def medians(self) -> list[float]:
        """Insert wall, insert CPU, checkpoint wall, checkpoint CPU (ms) and page faults (thousands) per round."""
        times = [statistics.median(r[k] * 1000 for r in self.rounds) for k in range(4)]
        return [*times, statistics.median(r[4] for r in self.rounds) / 1000]

    def close(self) -> None:
        if self.con is not None:
            self.con.close()

    def cached_mb(self) -> float:
        assert self.con is not None
        sql = "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"
        return float(self.con.execute(sql).fetchall()[0][0]) / 2**20


def run(row_group_size: int, tables: list, per: int, rounds: int, tmp: str) -> list[float]:
    """The default mode: ``rounds`` rounds of ``per`` 512-span transactions and a CHECKPOINT; each checkpoint's ms."""
    store = Growing(os.path.join(tmp, f"rg{row_group_size}.duckdb"), row_group_size, "")
    store.start()
    durations = []
    for _ in range(rounds):
        store.round(tables, per)
        durations.append(store.rounds[-1][2] * 1000)
    store.close()
    return durations


def run_at(row_group_size: int, tables: list, per: int, marks: list[int], tmp: str, memory_limit: str) -> None:
    """``--at``: fill a store as the writer does (512-span transactions, a CHECKPOINT after every ``per`` of them),
    and after each of its rounds run one on a reference store that starts again at ``FRESH_SPANS``: both in the
    same minutes, so the machine's drift (20-35 % within an hour here) is out of their ratio. As the store
    passes each size in ``marks`` (spans), print both stores' medians of their last three rounds and the ratio.

    A bulk fill (INSERTs of many thousands of rows) would be faster but makes another store: its row groups come
    from DuckDB's optimistic writes, and its checkpoints grew 80 → 176 ms from 0.1 to 10 M spans (12-04)."""
    big = Growing(os.path.join(tmp, f"at{row_group_size}.duckdb"), row_group_size, memory_limit)
    fresh = Growing(os.path.join(tmp, f"fresh{row_group_size}.duckdb"), row_group_size, memory_limit)
    big.start()
    fresh.start()
    for mark in marks:
        while big.stored < mark or len(big.rounds) < 3 or len(fresh.rounds) < 3:
            big.round(tables, per)
            if fresh.stored >= FRESH_SPANS:
                fresh.start()
            fresh.round(tables, per)
        b, f = big.medians(), fresh.medians()
        ratio = (b[0] + b[2]) / (f[0] + f[2])
        print(
            f"  {row_group_size:>7,} at {big.stored / 1e6:5.2f} M: insert {b[0]:4.0f} ms (CPU {b[1]:4.0f}) "
            f"checkpoint {b[2]:4.0f} ms (CPU {b[3]:4.0f}) faults {b[4]:4.0f} k cached {big.cached_mb():5.0f} MB | "
            f"reference at {fresh.stored / 1e6:4.2f} M: insert {f[0]:4.0f} checkpoint {f[2]:4.0f} faults {f[4]:4.0f} k"
            f" | time per round, store / reference: {ratio:4.2f}",
            flush=True,
        )
    big.close()
    fresh.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="122880,16384,8192", help="row-group sizes to compare")
    ap.add_argument("--per-checkpoint", type=int, default=40_960, help="spans appended between checkpoints")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--at", default="", help="store sizes in millions of spans (e.g. 0,2,5,10): time growth instead")
    ap.add_argument("--memory-limit", default="", help="DuckDB memory_limit for --at (the receiver's default: 1GB)")
    args = ap.parse_args()
    redactor = Redactor()
    payloads = [make_request(512, time.time_ns() + i * 10**9, 9_000 + i) for i in range(64)]
    tables = [decode_payload("traces", PROTOBUF, p, redactor, None, 0).tables["spans"] for p in payloads]
    per = max(1, args.per_checkpoint // 512)
    if args.at:
        print(
            f"{per * 512:,} spans appended then checkpointed per round, as the writer fills a store, alternating with "
            f"a reference store started again every {FRESH_SPANS:,} spans; medians of each one's last three rounds "
            f"(memory_limit {args.memory_limit or 'DuckDB default'}):"
        )
        with tempfile.TemporaryDirectory(prefix="otel-agent-ckpt-") as tmp:
            for size in (int(s) for s in args.sizes.split(",")):
                marks = [int(float(m) * 1_000_000) for m in args.at.split(",")]
                run_at(size, tables, per, marks, tmp, args.memory_limit)
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
