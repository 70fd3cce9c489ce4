"""Querying several stores (shards written by receivers behind a load-balancing Collector) as one.

Each shard is attached read-only; an in-memory database gets one view per raw table that unions the
shards, and then the derived SQL on top, so every view gives the rows one store fed the same input would.
"""

from __future__ import annotations

import duckdb

from otel_agent.store.database import apply_derived, check_version

RAW_TABLES = ("spans", "span_events", "span_links", "logs", "metric_points")


def attach_shards(paths: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    for i, path in enumerate(paths):
        con.execute(f"ATTACH ? AS shard{i} (READ_ONLY)", [path])
        con.execute(f"USE shard{i}")
        check_version(con, path)
    con.execute("USE memory")
    for table in RAW_TABLES:
        union = " UNION ALL BY NAME ".join(f"SELECT * FROM shard{i}.main.{table}" for i in range(len(paths)))
        con.execute(f"CREATE VIEW {table} AS {union}")
    apply_derived(con)
    return con
