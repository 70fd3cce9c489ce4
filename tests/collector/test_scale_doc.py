"""The commands docs/scale.md gives, run as written: merging shards by hand with ATTACH, exporting the
raw tables of a closed store to Parquet (and reading them back whole), a day-partitioned dataset from
several shards, and the derived views over the Parquet files. Also: ``otel-agent sql`` refuses COPY.

No Collector needed: the stores are written by receivers fed directly with the SDK exporters.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import duckdb
import pytest

from otel_agent.errors import QueryRejectedError
from otel_agent.query.client import run_sql
from otel_agent.store.shards import RAW_TABLES
from tests.collector import workload
from tests.collector.compare import describe, differences, relations_of, snapshot_of
from tests.collector.workload import Workload
from tests.collector_binary import REPO_ROOT

DOC = REPO_ROOT / "docs" / "scale.md"
_TESTED = re.compile(r"<!-- tested: ([\w-]+) -->\s*```(\w+)\n(.*?)```", re.DOTALL)


def doc_blocks() -> dict[str, str]:
    """The doc's code blocks marked ``<!-- tested: NAME -->``, by name (indentation removed)."""
    return {m.group(1): textwrap.dedent(m.group(3)) for m in _TESTED.finditer(DOC.read_text())}


def fill_stores(make_receiver, tmp_path: Path) -> Workload:
    """otel_agent.duckdb gets the whole workload; shard0..2 get its traces split by trace id (logs with
    their trace, the metrics on shard0). All receivers are stopped (files closed) on return."""
    w = workload.build(runs=3, seed=7)
    single = make_receiver(db=str(tmp_path / "otel_agent.duckdb"))
    workload.send(w, grpc_endpoint=single.grpc_address, http_url=single.http_address)
    single.stop()
    for i in range(3):
        shard = make_receiver(db=str(tmp_path / f"shard{i}.duckdb"))
        part = Workload(
            spans=[s for s in w.spans if s.context.trace_id % 3 == i],
            logs=[r for r in w.logs if (r.log_record.trace_id or 0) % 3 == i],
            metrics=w.metrics if i == 0 else workload.MetricsData(resource_metrics=[]),
            handoffs=[],
        )
        workload.send(part, grpc_endpoint=shard.grpc_address, http_url=shard.http_address)
        shard.stop()
    return w


def test_scale_doc_commands_work_as_written(make_receiver, tmp_path, monkeypatch):
    blocks = doc_blocks()
    assert set(blocks) == {"attach", "parquet", "partitioned", "parquet-views"}, sorted(blocks)
    w = fill_stores(make_receiver, tmp_path)
    monkeypatch.chdir(tmp_path)  # the doc's relative file names

    # Parquet from one closed store: every raw table, read back whole with the same column types.
    store = duckdb.connect("otel_agent.duckdb", read_only=True)
    try:
        store.execute(blocks["parquet"])
        for table in RAW_TABLES:
            assert Path(f"{table}.parquet").is_file()
            described = store.execute(f"DESCRIBE {table}").fetchall()
            from_parquet = store.execute(f"DESCRIBE SELECT * FROM read_parquet('{table}.parquet')").fetchall()
            assert [c[:2] for c in from_parquet] == [c[:2] for c in described], table
            parquet = f"read_parquet('{table}.parquet')"
            counts = store.execute(
                f"SELECT (SELECT count(*) FROM {table}), (SELECT count(*) FROM {parquet}), "
                f"(SELECT count(*) FROM (SELECT * FROM {table} EXCEPT ALL SELECT * FROM {parquet})), "
                f"(SELECT count(*) FROM (SELECT * FROM {parquet} EXCEPT ALL SELECT * FROM {table}))"
            ).fetchone()
            assert counts[0] == counts[1], (table, counts)
            assert counts[2:] == (0, 0), (table, counts)
        assert store.execute("SELECT count(*) FROM read_parquet('spans.parquet')").fetchone()[0] == len(w.spans)
        relations = relations_of(store)
        want = snapshot_of(store, relations)
    finally:
        store.close()

    # The derived SQL over the Parquet files gives the store's rows, view for view.
    namespace: dict = {}
    exec(compile(blocks["parquet-views"], "docs/scale.md[parquet-views]", "exec"), namespace)
    over_parquet = namespace["con"]
    try:
        differ = differences(snapshot_of(over_parquet, relations), want)
        assert not differ, f"derived SQL over Parquet differs from the store:\n{describe(differ)}"
    finally:
        over_parquet.close()

    # Shards merged by hand, then a day-partitioned Parquet dataset from them.
    session = duckdb.connect()
    try:
        by_service = session.execute(blocks["attach"]).fetchall()
        assert sum(n for _service, n in by_service) == len(w.spans)
        assert {s for s, _n in by_service} == {"planner", "fact_checker"}
        assert session.execute(blocks["partitioned"]).fetchall() == [(len(w.spans),)]
        assert sorted(p.name for p in Path("spans_by_day").iterdir())[0].startswith("day=")
    finally:
        session.close()


def test_otel_agent_sql_refuses_copy(make_receiver, tmp_path):
    receiver = make_receiver(db=str(tmp_path / "closed.duckdb"))
    receiver.stop()
    target = tmp_path / "out.parquet"
    with pytest.raises(QueryRejectedError):
        run_sql(f"COPY (SELECT * FROM spans) TO '{target}' (FORMAT parquet)", [str(tmp_path / "closed.duckdb")])
    assert not target.exists()
