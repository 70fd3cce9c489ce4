"""The re-delivery insert of logs and metric points: the registered statement (``ingest/*_insert_new``, one
INSERT over the macro ``oa_not_stored``, views/ingest/010_redelivery.sql) against the two statements it replaced
(a TEMP table of the stored keys, then the INSERT), in the same run, on the same store and batch.

A store holds ``--stored`` records of each table; the batch has ``--batch`` records, half of them stored already
(so the writer takes this path). Each variant runs in a rolled-back transaction, alternating, and the CPU time of
the process (DuckDB's threads included) is reported as a median with the ratio new / old.

    python bench/redelivery_sql.py [--stored 100000] [--batch 100000 512] [--reps 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import pyarrow as pa

from otel_agent.fold.logs import LOGS_SCHEMA
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA
from otel_agent.store.database import open_store
from otel_agent.store.statements import statement

BASE_NS = 1_764_000_000_000_000_000
BEFORE = """CREATE OR REPLACE TEMP TABLE _dup AS
    SELECT s.time, s.content_hash FROM {table} s SEMI JOIN incoming_{table} b USING (time, content_hash);
INSERT INTO {table} BY NAME
    SELECT * FROM incoming_{table} b
    WHERE NOT EXISTS (SELECT 1 FROM _dup d WHERE d.time = b.time AND d.content_hash = b.content_hash)
    QUALIFY row_number() OVER (PARTITION BY time, content_hash) = 1;"""
"""The two statements of each table before the fold (the same text for both tables but its name)."""


def records(schema: pa.Schema, start: int, n: int) -> pa.Table:
    cols: dict[str, list] = {f.name: [None] * n for f in schema}
    cols["time"] = [BASE_NS + (start + i) * 1000 for i in range(n)]
    cols["content_hash"] = [f"{start + i:032x}" for i in range(n)]
    if "body" in cols:
        cols["body"] = ['"hello"'] * n
    if "metric_name" in cols:
        cols["metric_name"], cols["type"] = ["m"] * n, ["gauge"] * n
    return pa.Table.from_pydict(cols, schema=schema)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stored", type=int, default=100_000)
    ap.add_argument("--batch", type=int, nargs="+", default=[100_000, 512])
    ap.add_argument("--reps", type=int, default=11)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    con = open_store(os.path.join(tempfile.mkdtemp(), "bench.duckdb"))
    for table, schema in (("logs", LOGS_SCHEMA), ("metric_points", METRIC_POINTS_SCHEMA)):
        con.register(f"incoming_{table}", records(schema, 0, args.stored))
        con.execute(statement(f"ingest/{table}_insert_all"))
        con.unregister(f"incoming_{table}")
        con.execute("CHECKPOINT")
        variants = {"before": BEFORE.format(table=table), "now": statement(f"ingest/{table}_insert_new")}
        for n in args.batch:
            con.register(f"incoming_{table}", records(schema, args.stored - n // 2, n))
            cpu: dict[str, list[float]] = {k: [] for k in variants}
            for rep in range(args.reps):
                for name in list(variants)[:: 1 if rep % 2 else -1]:
                    con.execute("BEGIN")
                    t = time.process_time()
                    con.execute(variants[name]).fetchall()
                    cpu[name].append(time.process_time() - t)
                    (count,) = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0]
                    assert count == args.stored + n - n // 2, (name, count)
                    con.execute("ROLLBACK")
            con.unregister(f"incoming_{table}")
            before, now = (statistics.median(cpu[k]) * 1e3 for k in variants)
            print(f"{table:14} batch {n:>7,}: before {before:7.2f} ms  now {now:7.2f} ms CPU  ratio {now / before:.2f}")
    con.close()


if __name__ == "__main__":
    main()
