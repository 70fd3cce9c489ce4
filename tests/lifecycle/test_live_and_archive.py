"""Queries over live ∪ archive equal queries over one store that kept everything (every raw table and view)."""

from __future__ import annotations

import time

import duckdb

from otel_agent.lifecycle.reading import open_with_archive
from otel_agent.query.client import open_readonly
from tests.collector import workload as wl
from tests.collector.compare import describe, differences, relations_of, snapshot_of
from tests.conftest import rows


def test_live_and_archive_equal_one_store(make_receiver, tmp_path) -> None:
    work = wl.build(runs=4)
    whole = make_receiver()
    # --max-db-bytes 1: the store is always over its size, so every window is archived and then deleted
    lean = make_receiver(max_db_bytes=1, archive=str(tmp_path / "archive"))
    for r in (whole, lean):
        wl.send(work, grpc_endpoint=r.grpc_address, http_url=r.http_address)
    deadline = time.monotonic() + 90
    while rows(lean, "SELECT (SELECT count(*) FROM spans) + (SELECT count(*) FROM logs) "
                     "+ (SELECT count(*) FROM metric_points)") != [(0,)]:  # fmt: skip
        assert time.monotonic() < deadline
        time.sleep(0.2)
    whole_db, lean_db = whole.config.db, lean.config.db
    whole.stop()
    lean.stop()
    want_con = open_readonly([whole_db])
    got_con = open_with_archive([lean_db], str(tmp_path / "archive"))
    relations = relations_of(want_con)
    assert "runs" in relations and "claim_lineage" in relations
    want, got = snapshot_of(want_con, relations), snapshot_of(got_con, relations)
    assert sum(len(v) for v in want.values()) > 0
    assert differences(got, want) == {}, describe(differences(got, want))
    # nothing in the live file: the data comes from the archive
    live = duckdb.connect(lean_db, read_only=True)
    assert live.execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
