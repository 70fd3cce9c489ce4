"""How the insert-time dedupe of spans scales with table size (issue 2 §5: measure before choosing).

Builds a store batch by batch (4096 spans each, start times increasing like live traffic) and prints the
cost per span of the group-commit SQL in otel_agent/store/ingest/spans.sql at several table sizes, against
the same batches inserted with no dedupe (plain INSERT) in the same run. A re-sent batch is also timed.

    python bench/dedupe.py [--rows 4000000] [--db /tmp/dedupe.duckdb]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import pyarrow as pa

from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA
from otel_agent.store.database import open_store
from otel_agent.store.sql_files import read_sql

BATCH = 4096


def make_batch(seq: int) -> pa.Table:
    base = 1_764_000_000_000_000_000 + seq * BATCH * 250_000
    n = BATCH
    cols = {f.name: [None] * n for f in SPANS_SCHEMA}
    cols["trace_id"] = [os.urandom(16).hex() for _ in range(n)]
    cols["span_id"] = [os.urandom(8).hex() for _ in range(n)]
    cols["start_time"] = [base + i * 250_000 for i in range(n)]
    cols["end_time"] = [base + i * 250_000 + 5_000_000 for i in range(n)]
    cols["name"] = ["chat gpt-4o"] * n
    cols["attributes"] = ['{"gen_ai.operation.name":"chat","gen_ai.usage.input_tokens":123}'] * n
    return pa.Table.from_pydict(cols, schema=SPANS_SCHEMA)


def timed_insert(con, batch: pa.Table, sql: str) -> float:
    empty_events = SPAN_EVENTS_SCHEMA.empty_table()
    empty_links = SPAN_LINKS_SCHEMA.empty_table()
    con.register("incoming_spans", batch)
    con.register("incoming_span_events", empty_events)
    con.register("incoming_span_links", empty_links)
    t = time.perf_counter()
    con.execute("BEGIN")
    con.execute(sql)
    con.execute("COMMIT")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    dedupe_sql = read_sql("ingest", "spans.sql")
    plain_sql = "INSERT INTO spans BY NAME SELECT * FROM incoming_spans"
    con_d = open_store(args.db or os.path.join(tmp, "dedupe.duckdb"))
    con_p = open_store(os.path.join(tmp, "plain.duckdb"))
    checkpoints = {int(args.rows * f) // BATCH for f in (0.0, 0.25, 0.5, 1.0)}
    n_batches = args.rows // BATCH
    print(
        f"{'rows in table':>14} {'dedupe us/span':>15} {'plain us/span':>14} {'re-sent us/span':>16} {'rows added':>11}"
    )
    window_d: list[float] = []
    window_p: list[float] = []
    for seq in range(n_batches + 1):
        batch = make_batch(seq)
        window_d.append(timed_insert(con_d, batch, dedupe_sql))
        window_p.append(timed_insert(con_p, batch, plain_sql))
        if seq in checkpoints or seq == n_batches:
            before = con_d.execute("SELECT count(*) FROM spans").fetchall()[0][0]
            resend = timed_insert(con_d, batch, dedupe_sql)
            after = con_d.execute("SELECT count(*) FROM spans").fetchall()[0][0]
            last_d = sum(window_d[-20:]) / len(window_d[-20:])
            last_p = sum(window_p[-20:]) / len(window_p[-20:])
            print(
                f"{before:>14,} {last_d / BATCH * 1e6:>15.2f} {last_p / BATCH * 1e6:>14.2f} "
                f"{resend / BATCH * 1e6:>16.2f} {after - before:>11}"
            )


if __name__ == "__main__":
    main()
