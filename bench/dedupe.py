"""How the insert-time dedupe of spans scales with table size (issue 2 §5: measure before choosing).

Builds a store group commit by group commit (4096 spans each, end times increasing like live traffic, 2 %
of spans hour-long so their start times lie far behind) and prints the writer's cost per span at several
table sizes, against the same batches committed with a plain INSERT in the same run, and the cost of
re-sending a batch that is already stored (the re-delivery path).

    python bench/dedupe.py [--rows 4000000]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from concurrent.futures import Future

import pyarrow as pa

from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA
from otel_agent.ingest.jobs import BatchJob
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store

BATCH = 4096
HOUR_NS = 3600 * 10**9


def make_batch(seq: int, rnd: random.Random) -> FoldedBatch:
    base = 1_764_000_000_000_000_000 + seq * BATCH * 250_000
    n = BATCH
    cols: dict[str, list] = {f.name: [None] * n for f in SPANS_SCHEMA}
    cols["trace_id"] = [os.urandom(16).hex() for _ in range(n)]
    cols["span_id"] = [os.urandom(8).hex() for _ in range(n)]
    cols["end_time"] = [base + i * 250_000 for i in range(n)]
    cols["start_time"] = [e - (HOUR_NS if rnd.random() < 0.02 else 5_000_000) for e in cols["end_time"]]
    cols["name"] = ["chat gpt-4o"] * n
    cols["attributes"] = ['{"gen_ai.operation.name":"chat","gen_ai.usage.input_tokens":123}'] * n
    tables = {
        "spans": pa.Table.from_pydict(cols, schema=SPANS_SCHEMA),
        "span_events": SPAN_EVENTS_SCHEMA.empty_table(),
        "span_links": SPAN_LINKS_SCHEMA.empty_table(),
    }
    return FoldedBatch(signal="traces", tables=tables, items=n)


def timed(writer: Writer, batch: FoldedBatch) -> float:
    """The writer's group commit of ``batch`` alone, called directly (the writer thread is idle)."""
    job = BatchJob(batch, writer.admit(batch.payload_bytes), Future())
    writer.group_commit.prepare(job)
    t = time.perf_counter()
    writer.group_commit.commit([job])
    elapsed = time.perf_counter() - t
    writer.release(job.admission)
    return elapsed


def plain_insert(con, batch: FoldedBatch) -> float:
    con.register("incoming", batch.tables["spans"])
    t = time.perf_counter()
    con.execute("BEGIN; INSERT INTO spans BY NAME SELECT * FROM incoming; COMMIT")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=4_000_000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    con_d = open_store(os.path.join(tmp, "dedupe.duckdb"))
    con_p = open_store(os.path.join(tmp, "plain.duckdb"))
    writer = Writer(con_d, max_inflight_bytes=1 << 40)
    rnd = random.Random(1)
    n_batches = args.rows // BATCH
    report_at = {int(n_batches * f) for f in (0.0, 0.25, 0.5, 0.75)} | {n_batches}
    print(
        f"{'rows in table':>14} {'dedupe us/span':>15} {'plain us/span':>14} {'re-sent us/span':>16} {'rows added':>11}"
    )
    window_d: list[float] = []
    window_p: list[float] = []
    for seq in range(n_batches + 1):
        batch = make_batch(seq, rnd)
        window_d.append(timed(writer, batch))
        window_p.append(plain_insert(con_p, batch))
        if seq in report_at:
            before = con_d.execute("SELECT count(*) FROM spans").fetchall()[0][0]
            resend = timed(writer, batch)
            after = con_d.execute("SELECT count(*) FROM spans").fetchall()[0][0]
            last_d = sum(window_d[-20:]) / len(window_d[-20:])
            last_p = sum(window_p[-20:]) / len(window_p[-20:])
            print(
                f"{before:>14,} {last_d / BATCH * 1e6:>15.2f} {last_p / BATCH * 1e6:>14.2f} "
                f"{resend / BATCH * 1e6:>16.2f} {after - before:>11}",
                flush=True,
            )
    writer.close()


if __name__ == "__main__":
    main()
