"""kill -9 while the receiver archives and deletes: every acknowledged span is in the archive or the live store."""

from __future__ import annotations

import os
import signal
import time

import duckdb

from otel_agent.query.client import query_receiver
from tests.conftest import free_port
from tests.lifecycle.support import healthz, hours_ago, send, spans_at
from tests.receiver.test_crash import start_receiver


def _serve(db: str, *extra: str):
    grpc_port, http_port = free_port(), free_port()

    proc = start_receiver(db, grpc_port, http_port)
    return proc, f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{http_port}"


def test_kill_9_during_archive_loses_nothing(tmp_path, monkeypatch) -> None:
    db, archive = str(tmp_path / "live.duckdb"), str(tmp_path / "archive")
    proc, grpc_address, _ = _serve(db)
    sent = [s for h in (7, 6, 5, 4, 3) for s in spans_at(hours_ago(h), 4000, f"h{h}-")]
    send(grpc_address, sent, chunk=2000)  # every one acknowledged
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    monkeypatch.setenv("OTEL_AGENT_RETENTION", "1h")
    monkeypatch.setenv("OTEL_AGENT_ARCHIVE", archive)
    for delay in (1.2, 1.6, 2.0, 2.5):  # the planner starts after ~1 s: each kill lands in archive or delete
        proc, _, _ = _serve(db)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    proc, _, http = _serve(db)
    deadline = time.monotonic() + 120
    while query_receiver(http, "SELECT count(*) FROM spans").rows != [(0,)]:
        assert time.monotonic() < deadline, healthz(http)["lifecycle"]
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)

    con = duckdb.connect()

    con.execute(f"ATTACH '{db}' AS live (READ_ONLY)")
    live = {r[0] for r in con.execute("SELECT span_id FROM live.spans").fetchall()}
    archived = {
        r[0]
        for r in con.execute(
            f"SELECT span_id FROM read_parquet('{archive}/signal=spans/**/*.parquet', hive_partitioning = true)"
        ).fetchall()
    }
    expected = {s["span_id"].hex() for s in sent}
    assert expected <= live | archived, len(expected - live - archived)
    assert archived, "the archive was never written"
    assert not live, "retention left old spans in the live store"
    assert len(archived) == len(expected)
