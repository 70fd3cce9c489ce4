"""The rolling archive: windows written as Hive-partitioned Parquet, verified, then deleted; idempotent."""

from __future__ import annotations

import datetime as dt
import time

import duckdb
import pyarrow.parquet as pq

from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.tables import SPANS
from tests.conftest import rows
from tests.lifecycle.support import healthz, hours_ago, send, spans_at


def wait_deleted(r, n: int) -> dict:
    deadline = time.monotonic() + 60
    while True:
        report = healthz(r.http_address)["lifecycle"]
        if report["rows_deleted"].get("spans", 0) >= n and report["rows_pending_delete"] == 0:
            return report
        assert time.monotonic() < deadline, report
        time.sleep(0.1)


def test_windows_are_archived_verified_then_deleted(make_receiver, tmp_path) -> None:
    archive_dir = tmp_path / "archive"
    r = make_receiver(retention="1h", archive=str(archive_dir))
    t1, t2 = hours_ago(5), hours_ago(3)
    sent = spans_at(t1, 400, "a") + spans_at(t2, 250, "b")
    send(r.grpc_address, sent + spans_at(hours_ago(0.1), 50, "recent"))
    report = wait_deleted(r, 650)
    files = sorted(p.relative_to(archive_dir).parent.as_posix() for p in archive_dir.glob("signal=*/**/*.parquet"))
    assert files == [
        f"signal=spans/date={t1:%Y-%m-%d}/hour={t1:%H}",
        f"signal=spans/date={t2:%Y-%m-%d}/hour={t2:%H}",
    ]
    table = pq.read_table(archive_dir / "signal=spans", partitioning="hive")
    assert sorted(table.column("name").to_pylist()) == sorted(s["name"] for s in sent)
    assert report["rows_archived"] == 650
    assert report["archive_files_written"] == 2
    assert rows(r, "SELECT count(*) FROM spans") == [(50,)]


def test_a_window_written_twice_yields_the_same_file(tmp_path) -> None:
    archive = Archive(str(tmp_path / "a"))
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE spans AS SELECT 'x' AS trace_id, i::VARCHAR AS span_id, "
        "TIMESTAMP_NS '2026-01-01 10:00:00' + INTERVAL (i) SECOND AS end_time FROM range(100) t(i)"
    )
    window = dt.datetime(2026, 1, 1, 10)
    rows_ = con.sql("SELECT * FROM spans").to_arrow_table()
    first = archive.write_window(SPANS, window, rows_)
    again = archive.write_window(SPANS, window, rows_)
    reordered = archive.write_window(SPANS, window, rows_.take(list(range(99, -1, -1))))
    assert first.rows_written == 100
    assert not first.already_archived
    assert again.already_archived
    assert again.rows_written == 0
    assert reordered.already_archived
    assert archive.files("spans") == [first.path]
    more = con.sql("SELECT * FROM spans UNION ALL SELECT 'y', '0', TIMESTAMP_NS '2026-01-01 10:30:00'").to_arrow_table()
    late = archive.write_window(SPANS, window, more)
    assert late.rows_written == 1  # only the late row, in a file of its own beside the first
    assert len(archive.files("spans")) == 2
