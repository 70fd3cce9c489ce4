"""Ingest keeps its rate while retention deletes a backlog: real receiver, pre-encoded OTLP over gRPC."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from tests.conftest import rows
from tests.lifecycle.support import TRACE_EXPORT, healthz, hours_ago, send, spans_at
from tests.otlp_builders import span_request

BACKLOG = 60_000


def _sender(address: str, seconds: float, acked: list[int]) -> None:
    """Send 200-span requests of recent spans for ``seconds``; count acknowledged spans."""
    payloads = [span_request(spans_at(hours_ago(0.1), 200, f"live{k}-")).SerializeToString() for k in range(40)]
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        deadline = time.monotonic() + seconds
        i = 0
        while time.monotonic() < deadline:
            call(payloads[i % len(payloads)], timeout=30)  # re-sent payloads are re-deliveries: absorbed
            acked.append(200)
            i += 1


def _rate(address: str, seconds: float) -> float:
    acked: list[int] = []
    threads = [threading.Thread(target=_sender, args=(address, seconds, acked)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(acked) / seconds


@pytest.mark.serial  # compares two rates measured seconds apart: alone on the machine
def test_ingest_continues_at_rate_while_retention_deletes(make_receiver, tmp_path) -> None:
    db = str(tmp_path / "backlog.duckdb")
    first = make_receiver(db=db)
    send(first.grpc_address, spans_at(hours_ago(6), BACKLOG, "old"), chunk=5000)
    baseline = _rate(first.grpc_address, 3.0)
    first.stop()

    r = make_receiver(db=db, retention="1h")
    before = healthz(r.http_address)["lifecycle"]
    assert before["rows_deleted"] == {}
    during = _rate(r.grpc_address, 3.0)
    mid = healthz(r.http_address)["lifecycle"]
    print(f"baseline {baseline:.0f} spans/s, during retention {during:.0f} spans/s, {mid}")
    assert mid["rows_deleted"].get("spans", 0) > 0, mid  # deletion ran while the senders sent
    deadline = time.monotonic() + 60
    while healthz(r.http_address)["lifecycle"]["rows_deleted"]["spans"] < BACKLOG:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    report = healthz(r.http_address)["lifecycle"]
    # the whole backlog left, in bounded steps (sized by their time: doubling from 500 rows, the fewest is 7)
    assert report["rows_deleted"]["spans"] == BACKLOG, report
    assert report["delete_steps"] >= 7, report
    assert report["max_delete_step_ms"] < 1000, report  # bounded (a few ms on a quiet machine; shared here)
    assert rows(r, "SELECT count(*) FROM spans WHERE name LIKE 'old%'") == [(0,)]
    assert during >= 0.6 * baseline, (during, baseline, report)
