"""The archive registered as Iceberg tables: a second engine (pyiceberg's scan → Arrow) reads what was archived,
appends are idempotent per archive file, and concurrent appenders (shards) lose nothing."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from otel_agent.lifecycle.iceberg import IcebergMirror
from tests.lifecycle.support import healthz, hours_ago, send, spans_at


def test_a_second_engine_reads_the_archive_as_iceberg_tables(make_receiver, tmp_path) -> None:
    archive = tmp_path / "archive"
    r = make_receiver(retention="1h", archive=str(archive))
    sent = spans_at(hours_ago(4), 300, "a") + spans_at(hours_ago(3), 200, "b")
    send(r.grpc_address, sent)
    deadline = time.monotonic() + 60
    while (report := healthz(r.http_address)["lifecycle"])["rows_deleted"].get("spans", 0) < 500:
        assert time.monotonic() < deadline, report
        time.sleep(0.1)
    assert report["iceberg_appends"] >= 2
    r.stop()
    # another engine, knowing only the catalog file
    catalog = SqlCatalog("otel_agent", uri=f"sqlite:///{archive}/iceberg_catalog.db", warehouse=f"file://{archive}")
    scanned = catalog.load_table("otel_agent.spans").scan(selected_fields=("span_id", "name", "end_time")).to_arrow()
    assert sorted(scanned.column("name").to_pylist()) == sorted(s["name"] for s in sent)
    want = {s["span_id"].hex(): s["end"] for s in sent}
    ids, ends = scanned.column("span_id").to_pylist(), scanned.column("end_time").to_pylist()
    assert dict(zip(ids, ends, strict=True)) == want  # nanoseconds kept
    parquet = pq.read_table(archive / "signal=spans", partitioning="hive")
    assert parquet.num_rows == scanned.num_rows == 500


@pytest.fixture(params=["sqlite", "postgres"])
def catalog_uri(request, tmp_path) -> str:
    """A fresh SQL catalog: a SQLite file (the default), or a database on the tests' PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return request.getfixturevalue("postgres").create_database(f"appenders_{tmp_path.name}".lower())


def test_concurrent_appenders_lose_nothing_and_appends_are_idempotent(catalog_uri, tmp_path) -> None:
    uri, warehouse = catalog_uri, f"file://{tmp_path}/wh"
    IcebergMirror(uri, warehouse).table("t", pa.schema([("shard", pa.int64()), ("i", pa.int64())]))
    errors: list[BaseException] = []
    start = threading.Barrier(3)

    def shard(n: int) -> None:
        mirror = IcebergMirror(uri, warehouse)  # its own catalog connection, like another receiver
        start.wait()
        try:
            for k in range(5):
                rows = pa.table({"shard": [n] * 10, "i": list(range(10))})
                assert mirror.append("t", rows, f"shard{n}-file{k}.parquet")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=shard, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    mirror = IcebergMirror(uri, warehouse)
    assert not mirror.append("t", pa.table({"shard": [0], "i": [0]}), "shard0-file0.parquet")  # already there
    table = SqlCatalog("otel_agent", uri=uri, warehouse=warehouse).load_table("otel_agent.t").scan().to_arrow()
    assert table.num_rows == 150

    # a mirror whose view of the table is stale when it commits loses nobody's append
    stale, other = IcebergMirror(uri, warehouse), IcebergMirror(uri, warehouse)
    stale.table("t", pa.schema([]))
    assert other.append("t", pa.table({"shard": [7], "i": [1]}), "other.parquet")
    assert stale.append("t", pa.table({"shard": [8], "i": [1]}), "stale.parquet")
    assert stale.conflicts == 1  # its first commit lost to other's and was retried on the refreshed table
    final = SqlCatalog("otel_agent", uri=uri, warehouse=warehouse).load_table("otel_agent.t").scan().to_arrow()
    assert final.num_rows == 152
    assert sorted(table.group_by("shard").aggregate([("i", "count")]).column("i_count").to_pylist()) == [50, 50, 50]
