"""Retention in a live receiver: old windows leave, recent ones and the product's tables stay."""

from __future__ import annotations

import time

from otel_agent.config import parse_duration
from tests.conftest import rows
from tests.lifecycle.support import healthz, hours_ago, send, spans_at


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def test_parse_duration() -> None:
    assert [parse_duration(x) for x in ("7d", "12h", "30m", "90s", "0", "1w", "2.5h")] == [
        604800, 43200, 1800, 90, 0, 604800, 9000,
    ]  # fmt: skip


def test_retention_deletes_past_the_horizon_keeps_recent_and_reviews(make_receiver) -> None:
    r = make_receiver(retention="2h")
    claim = {"otel_agent.record.kind": "claim", "otel_agent.claim.id": "claim-old", "otel_agent.claim.text": "x"}
    old = spans_at(hours_ago(5), 300, "old") + spans_at(hours_ago(4), 300, "older", claim)[:1]
    recent = spans_at(hours_ago(0.2), 200, "new")
    send(r.grpc_address, old + recent)
    r.writer.run_write(
        lambda con: con.execute(
            "INSERT INTO reviews VALUES ('rev_1', 'claim', 'claim-old', 'approve', 'ann', 'ok', now(), NULL, NULL)"
        )
    )
    wait_for(lambda: rows(r, "SELECT count(*) FROM spans")[0][0] == 200)
    assert rows(r, "SELECT count(*) FROM spans WHERE name LIKE 'new%'") == [(200,)]
    assert rows(r, "SELECT count(*) FROM reviews") == [(1,)]
    assert rows(r, "SELECT referrer_kind, referrer_id, missing_id FROM dangling_references") == [
        ("review", "rev_1", "claim-old")
    ]
    wait_for(lambda: healthz(r.http_address)["lifecycle"]["checkpoints"] >= 1)
    report = healthz(r.http_address)["lifecycle"]
    assert report["rows_deleted"]["spans"] == 301
    assert report["rows_pending_delete"] == 0
    assert report["retention_s"] == 7200
