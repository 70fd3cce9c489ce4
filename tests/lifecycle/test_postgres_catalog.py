"""The Iceberg catalog in PostgreSQL (``--iceberg-catalog postgresql://…``), against a real server of the test's
own on loopback: two receivers archive to one local directory and register their files in the same Postgres
catalog, and a second engine (pyiceberg's scan through that catalog) reads every span exactly once."""

from __future__ import annotations

import threading
import time

from pyiceberg.catalog.sql import SqlCatalog

from tests.lifecycle.support import healthz, hours_ago, send, spans_at


def test_two_receivers_register_one_archive_in_a_postgres_catalog(make_receiver, postgres, tmp_path) -> None:
    url = postgres.create_database("receivers")
    archive = tmp_path / "archive"
    shards = [make_receiver(retention="1h", archive=str(archive), iceberg_catalog=url) for _ in range(2)]
    sent = [spans_at(hours_ago(3), 150, f"r{i}-") for i in range(2)]  # the same window: both append to its tables
    senders = [threading.Thread(target=send, args=(r.grpc_address, s)) for r, s in zip(shards, sent, strict=True)]
    for t in senders:
        t.start()
    for t in senders:
        t.join()
    deadline = time.monotonic() + 60
    for r, spans in zip(shards, sent, strict=True):
        while (report := healthz(r.http_address)["lifecycle"])["rows_deleted"].get("spans", 0) < len(spans):
            assert time.monotonic() < deadline, report
            time.sleep(0.1)
    reports = [healthz(r.http_address)["lifecycle"] for r in shards]
    # Each receiver wrote one span file into the shared window, and a receiver registers every file of its window
    # not yet in the catalog, so either may register the other's (a receiver with 0 appends is no fault): what
    # holds is that the two files were registered once each, whoever did it.
    assert sum(report["iceberg_appends"] for report in reports) == 2, reports
    for r in shards:
        r.stop()
    assert not (archive / "iceberg_catalog.db").exists()  # the default SQLite catalog was not used

    # another engine, knowing only the Postgres URL and the warehouse
    catalog = SqlCatalog("otel_agent", uri=url, warehouse=f"file://{archive}/iceberg")
    assert ("otel_agent", "spans") in catalog.list_tables("otel_agent")
    scanned = catalog.load_table("otel_agent.spans").scan(selected_fields=("span_id", "name", "end_time")).to_arrow()
    want = {s["span_id"].hex(): (s["name"], s["end"]) for spans in sent for s in spans}
    got = list(zip(scanned.column("span_id").to_pylist(), scanned.column("name").to_pylist(),
                   scanned.column("end_time").to_pylist(), strict=True))  # fmt: skip
    assert len(got) == len(want) == 300  # each span once
    assert {i: (n, e) for i, n, e in got} == want  # names and nanosecond end times kept
