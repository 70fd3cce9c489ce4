"""Three receivers behind a real Collector (collector_config/loadbalancing.yaml), each archiving to ONE shared
archive and retaining nothing, read as live ∪ archive, give every raw table and derived view one receiver with
no archive gives for the same input (the shard comparison of tests/collector, extended to the archive).

The shards archive while the workload arrives (``max_db_bytes=1``: always over the bound, so every window is
archived and deleted as soon as it holds rows, the open hour included), and their Iceberg mirrors append to the
same tables of one SQLite catalog: a second engine (pyiceberg's scan) finds every span exactly once.
"""

from __future__ import annotations

import time

import duckdb
from pyiceberg.catalog.sql import SqlCatalog

from otel_agent.lifecycle.reading import open_with_archive
from otel_agent.query.client import open_readonly
from otel_agent.store.database import RAW_TABLES
from tests.collector import workload
from tests.collector.compare import describe, differences, relations_of, snapshot_of
from tests.collector.conftest import wait_for_count
from tests.conftest import rows

RUNS = 4


def live_rows(receivers) -> int:
    return sum(
        rows(r, "SELECT " + " + ".join(f"(SELECT count(*) FROM {t})" for t in RAW_TABLES))[0][0] for r in receivers
    )


def test_three_shards_archiving_to_one_archive_equal_one_receiver(make_receiver, make_collector, tmp_path) -> None:
    w = workload.build(runs=RUNS)
    archive = tmp_path / "archive"
    shards = [
        make_receiver(db=str(tmp_path / f"shard{i}.duckdb"), max_db_bytes=1, archive=str(archive)) for i in range(3)
    ]
    single = make_receiver(db=str(tmp_path / "single.duckdb"))
    balancer = make_collector(
        "loadbalancing.yaml", OTEL_AGENT_RECEIVER_ENDPOINTS=",".join(r.grpc_address for r in shards)
    )
    gateway = make_collector("gateway.yaml", OTEL_AGENT_RECEIVER_GRPC=single.grpc_address)
    for collector in (balancer, gateway):
        workload.send(w, grpc_endpoint=collector.grpc_endpoint, http_url=collector.http_url)
    assert wait_for_count([single], "spans", len(w.spans)) == len(w.spans)
    for collector in (balancer, gateway):
        assert collector.stop() == 0
        collector.assert_nothing_dropped()
    deadline = time.monotonic() + 90
    while live_rows(shards):  # everything acknowledged has left the shards' live stores for the archive
        assert time.monotonic() < deadline, [r.lifecycle.report() for r in shards]
        time.sleep(0.2)
    reports = [r.lifecycle.report() for r in shards]
    assert all(rep["rows_archived"] > 0 for rep in reports), reports  # each shard archived its own part
    for r in (*shards, single):
        r.stop()

    want_con = open_readonly([single.config.db])
    got_con = open_with_archive([r.config.db for r in shards], str(archive))
    relations = relations_of(want_con)
    assert "runs" in relations
    assert "claim_lineage" in relations
    want, got = snapshot_of(want_con, relations), snapshot_of(got_con, relations)
    assert {t: sum(want[t].values()) for t in ("spans", "logs", "metric_points")} == {
        "spans": len(w.spans),
        "logs": len(w.logs),
        "metric_points": w.n_points,
    }
    differ = differences(got, want)
    assert not differ, f"live ∪ archive differs from the single store in {sorted(differ)}:\n{describe(differ)}"
    for path in (r.config.db for r in shards):  # nothing is read from the live files: all of it is archived
        assert duckdb.connect(path, read_only=True).execute("SELECT count(*) FROM spans").fetchall() == [(0,)]

    # The three mirrors appended to the same Iceberg table: every span once.
    catalog = SqlCatalog("otel_agent", uri=f"sqlite:///{archive}/iceberg_catalog.db", warehouse=f"file://{archive}")
    scanned = catalog.load_table("otel_agent.spans").scan(selected_fields=("trace_id", "span_id")).to_arrow()
    ids = list(zip(scanned.column("trace_id").to_pylist(), scanned.column("span_id").to_pylist(), strict=True))
    assert sorted(ids) == sorted(
        (format(s.context.trace_id, "032x"), format(s.context.span_id, "016x")) for s in w.spans
    )
