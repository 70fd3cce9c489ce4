"""The recent window of stored keys (ingest/recent.py) answers the re-delivery check for live data without a
query, exactly: re-sent spans and log records are stored once whether the window or the store answers, the
window is rebuilt from the file at start, and what it has let go of is asked of the store."""

from __future__ import annotations

import os
import time

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store
from tests.otlp_builders import T0, span_request

REDACTOR = Redactor()


def spans_at(start_ns: int, n: int, events: bool = True) -> bytes:
    req = span_request([{"start": start_ns + i * 1000, "name": f"s{i}"} for i in range(n)])
    if events:
        for s in req.resource_spans[0].scope_spans[0].spans:
            e = s.events.add()
            e.name, e.time_unix_nano = "step", s.start_time_unix_nano + 1
    return req.SerializeToString()


def logs_at(start_ns: int, n: int) -> bytes:
    req = ExportLogsServiceRequest()
    records = req.resource_logs.add().scope_logs.add().log_records
    for i in range(n):
        rec = records.add()
        rec.time_unix_nano = start_ns + i
        rec.body.string_value = f"line {i} {os.urandom(4).hex()}"
    return req.SerializeToString()


def write(writer: Writer, signal: str, *payloads: bytes) -> None:
    """The payloads in one group commit (submitted together, then awaited)."""
    futures = []
    for body in payloads:
        batch = decode_payload(signal, PROTOBUF, body, REDACTOR, None, 0)
        futures.append(writer.submit(batch, writer.admit(len(body))))
    for f in futures:
        f.result()


def counts(con) -> tuple[int, int, int, int, int]:
    return con.execute(
        "SELECT (SELECT count(*) FROM spans), (SELECT count(DISTINCT (trace_id, span_id)) FROM spans), "
        "(SELECT count(*) FROM span_events), (SELECT count(*) FROM logs), "
        "(SELECT count(DISTINCT (time, content_hash)) FROM logs)"
    ).fetchone()


def test_live_redelivery_is_answered_by_the_window_and_stays_exact_across_a_restart(tmp_path) -> None:
    path = tmp_path / "w.duckdb"
    now = time.time_ns()
    a, b, logs = spans_at(now, 40), spans_at(now + 10**6, 25), logs_at(now, 12)
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 40)
    write(writer, "traces", a)
    write(writer, "logs", logs)
    write(writer, "traces", a, b, a)  # a twice more, beside new spans, in one group commit
    write(writer, "logs", logs)
    assert writer.stats.duplicate_queries == 0
    writer.close()
    assert counts(con) == (65, 65, 65, 12, 12)
    con.close()

    con = open_store(path)  # a new writer rebuilds the window from the file
    writer = Writer(con, max_inflight_bytes=1 << 40)
    write(writer, "traces", b)
    write(writer, "logs", logs)
    write(writer, "traces", spans_at(now + 2 * 10**6, 5))
    assert writer.stats.duplicate_queries == 0
    writer.close()
    assert counts(con) == (70, 70, 70, 12, 12)
    con.close()


def test_what_the_window_let_go_of_is_asked_of_the_store(tmp_path) -> None:
    con = open_store(tmp_path / "w.duckdb")
    writer = Writer(con, max_inflight_bytes=1 << 40, recent_max_keys=10)
    now = time.time_ns()
    oldest, middle, newest = (spans_at(now - s * 10**9, 8, events=False) for s in (30, 20, 10))
    for body in (oldest, middle, newest):
        write(writer, "traces", body)
    assert writer.stats.duplicate_queries == 0
    write(writer, "traces", newest)  # still in the window (the older seconds were let go of: over 10 keys)
    assert writer.stats.duplicate_queries == 0
    write(writer, "traces", oldest)  # before the window's floor: the store answers
    assert writer.stats.duplicate_queries == 1
    write(writer, "traces", spans_at(T0, 3, events=False))  # 2024: outside any live window
    assert writer.stats.duplicate_queries == 2
    writer.close()
    assert counts(con)[:2] == (27, 27)
    con.close()


def test_old_data_restored_after_a_restart_is_deduplicated_by_the_store(tmp_path) -> None:
    path = tmp_path / "w.duckdb"
    old = spans_at(T0, 20)
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 40)
    write(writer, "traces", old)
    writer.close()
    con.close()
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 40)
    write(writer, "traces", old, spans_at(time.time_ns(), 4))
    assert writer.stats.duplicate_queries == 1
    writer.close()
    assert counts(con)[:3] == (24, 24, 24)
    con.close()
