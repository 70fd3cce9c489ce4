"""A store opened for writing is attached with small row groups (checkpoints then cost only the new data, see
store/database.py and bench/checkpoint.py), and every cursor of it sees the store as its default database."""

from __future__ import annotations

import sys
import time

import duckdb
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_agent.errors import StoreInUseError
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import ROW_GROUP_SIZE, STORE_CATALOG, open_store, store_cursor
from tests.otlp_builders import T0, any_value, kvs, resource_scope, span_request


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
    with store_cursor(con) as cur:
        assert cur.execute("SELECT current_database(), count(*) FROM spans").fetchall() == [(STORE_CATALOG, n)]
        sql = "SELECT row_group_id, max(count) FROM pragma_storage_info('spans') GROUP BY ALL"
        groups = cur.execute(sql).fetchall()
    assert len(groups) >= 4
    assert max(rows for _, rows in groups) <= ROW_GROUP_SIZE
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


def test_payload_columns_are_written_with_zstd_and_read_back_exactly(tmp_path) -> None:
    """Spans' and events' attributes and logs' body and attributes carry prompts, messages and tool I/O: the schema
    asks DuckDB for zstd there (010_spans.sql says why); the columns that repeat keep DuckDB's own choice."""
    path = tmp_path / "zstd.duckdb"
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 40)
    n = 2 * ROW_GROUP_SIZE

    def text(i: int) -> str:
        return f"message {i}: " + " ".join(f"word{(i * 7 + j) % 997}" for j in range(30))

    spans = span_request([{"name": f"s{i}", "attributes": {"gen_ai.prompt": text(i), "n": i}} for i in range(n)])
    for i, span in enumerate(spans.resource_spans[0].scope_spans[0].spans):
        event = span.events.add()
        event.time_unix_nano = T0 + i
        event.name = "gen_ai.choice"
        event.attributes.extend(kvs({"message": text(i + 1)}))
    logs = ExportLogsServiceRequest()
    _, scope_logs = resource_scope(logs, "svc", "tests")
    for i in range(n):
        record = scope_logs.log_records.add()
        record.time_unix_nano = T0 + i
        record.body.CopyFrom(any_value(text(i + 2)))
        record.attributes.extend(kvs({"gen_ai.tool.output": text(i + 3), "n": i}))
    writer.write(decode_payload("traces", PROTOBUF, spans.SerializeToString(), Redactor(), None, 0))
    writer.write(decode_payload("logs", PROTOBUF, logs.SerializeToString(), Redactor(), None, 0))
    writer.close()
    con.execute("CHECKPOINT")
    with store_cursor(con) as cur:

        def methods(table: str, column: str) -> set[str]:
            sql = (
                f"SELECT DISTINCT compression FROM pragma_storage_info('{table}')"
                " WHERE column_name = ? AND segment_type <> 'VALIDITY'"
            )
            return {m for (m,) in cur.execute(sql, [column]).fetchall()}

        assert methods("spans", "attributes") == {"ZSTD"}
        assert methods("span_events", "attributes") == {"ZSTD"}
        assert methods("logs", "body") == {"ZSTD"}
        assert methods("logs", "attributes") == {"ZSTD"}
        assert "ZSTD" not in methods("spans", "resource_attributes")
        assert cur.execute("SELECT attributes->>'gen_ai.prompt' FROM spans WHERE name = 's4321'").fetchall() == [
            (text(4321),)
        ]
        assert cur.execute(
            "SELECT e.attributes->>'message' FROM span_events e JOIN spans s USING (trace_id, span_id)"
            " WHERE s.name = 's4321'"
        ).fetchall() == [(text(4322),)]
        assert cur.execute(
            "SELECT body->>'$', attributes->>'gen_ai.tool.output' FROM logs WHERE (attributes->>'n')::INT = 77"
        ).fetchall() == [(text(79), text(80))]
    con.close()
