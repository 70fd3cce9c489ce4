"""A store opened for writing is attached with small row groups (checkpoints then cost only the new data, see
store/database.py and bench/checkpoint.py), and every cursor of it sees the store as its default database."""

from __future__ import annotations

import sys
import time

import duckdb
import pytest

from otel_agent.errors import StoreInUseError
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import ROW_GROUP_SIZE, STORE_CATALOG, open_store, store_cursor
from tests.otlp_builders import span_request


def test_written_rows_land_in_small_row_groups_and_cursors_see_the_store(tmp_path) -> None:
    path = tmp_path / "layout.duckdb"
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 40)
    n = 3 * ROW_GROUP_SIZE + 100
    for first in range(0, n, 5000):
        request = span_request([{"name": f"s{i}"} for i in range(first, min(n, first + 5000))])
        writer.write(decode_payload("traces", PROTOBUF, request.SerializeToString(), Redactor(), None, 0))
    writer.close()
    con.execute("CHECKPOINT")
    cur = store_cursor(con)
    assert cur.execute("SELECT current_database(), count(*) FROM spans").fetchall() == [(STORE_CATALOG, n)]
    groups = cur.execute("SELECT row_group_id, max(count) FROM pragma_storage_info('spans') GROUP BY ALL").fetchall()
    assert len(groups) >= 4
    assert max(rows for _, rows in groups) <= ROW_GROUP_SIZE
    cur.close()
    with pytest.raises(StoreInUseError, match="already open for writing in this process"):
        open_store(path)
    con.close()
    # a closed store opens directly, named after its file as usual
    ro = duckdb.connect(str(path), read_only=True)
    assert ro.execute("SELECT count(*) FROM spans").fetchall() == [(n,)]
    ro.close()


def test_the_writer_checkpoints_after_the_group_commit_not_inside_it(tmp_path) -> None:
    """DuckDB would checkpoint inside the COMMIT that crosses the threshold (so that group's replies wait for
    it); the writer runs CHECKPOINT itself after the replies, and leaves DuckDB only a backstop (4x)."""
    path = tmp_path / "checkpoints.duckdb"
    con = open_store(path, checkpoint_threshold="1MB")
    writer = Writer(con, max_inflight_bytes=1 << 40)
    assert con.execute("SELECT current_setting('checkpoint_threshold')").fetchall() == [("3.8 MiB",)]
    n = 20_000
    for first in range(0, n, 2000):
        request = span_request([{"name": f"s{i}", "attributes": {"k": "v" * 200}} for i in range(first, first + 2000)])
        writer.write(decode_payload("traces", PROTOBUF, request.SerializeToString(), Redactor(), None, 0))
    writer.close()
    wal = path.with_name(path.name + ".wal")
    assert writer.stats.checkpoints >= 4
    assert writer.stats.stage_seconds["checkpoint"] > 0
    assert (wal.stat().st_size if wal.exists() else 0) < 1_000_000
    con.close()
    assert duckdb.connect(str(path), read_only=True).execute("SELECT count(*) FROM spans").fetchall() == [(n,)]


def wait_until_writer_waits(writer: Writer, timeout_s: float = 30.0) -> None:
    """Until the writer thread is back waiting for its next job, i.e. it has made its checkpoint decision for the
    group just answered. A reply is released before that decision, so a caller that sends its next request at
    once can be in the queue by then, and the writer rightly skips the early checkpoint: a race this test must
    not run (two lost in a row let the WAL reach the threshold)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(writer._thread.ident or 0)
        while frame is not None and frame.f_code.co_name != "_next_job":
            frame = frame.f_back
        if frame is not None:
            return
        time.sleep(0.001)
    raise AssertionError("the writer thread did not go back to waiting for a job")


def test_with_nothing_waiting_the_writer_checkpoints_at_half_the_threshold(tmp_path) -> None:
    """Requests that arrive during a checkpoint wait for it, and it lasts as long as the WAL it folds in: with
    no request waiting after a group commit (one request at a time here, the next sent once the writer waits
    again), the writer checkpoints once the WAL holds IDLE_CHECKPOINT_FRACTION of the threshold, so no WAL ever
    reaches the threshold itself and every checkpoint is an early one."""
    path = tmp_path / "idle.duckdb"
    con = open_store(path, checkpoint_threshold="1MB")
    writer = Writer(con, max_inflight_bytes=1 << 40)
    wal = path.with_name(path.name + ".wal")
    largest = 0
    for first in range(0, 16_000, 400):
        request = span_request([{"name": f"s{i}", "attributes": {"k": "v" * 200}} for i in range(first, first + 400)])
        writer.write(decode_payload("traces", PROTOBUF, request.SerializeToString(), Redactor(), None, 0))
        largest = max(largest, wal.stat().st_size if wal.exists() else 0)
        wait_until_writer_waits(writer)
    writer.close()
    assert writer.stats.idle_checkpoints >= 3
    assert writer.stats.idle_checkpoints == writer.stats.checkpoints
    assert 0 < largest < 1 << 20
    con.close()
    assert duckdb.connect(str(path), read_only=True).execute("SELECT count(*) FROM spans").fetchall() == [(16_000,)]
