"""kill -9 of a live receiver under load while it archives and deletes: every acknowledged span ends up in the
archive or the live store, each once, and nothing past the horizon stays live.

Each kill is timed by the archive itself: the receiver is killed the moment a new Parquet file (or a temporary
one, mid-write) appears, that is between a window's archive and its delete, while senders keep sending recent
spans and late spans for the very windows being archived.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import grpc

from otel_agent.query.client import query_receiver
from tests.conftest import free_port
from tests.lifecycle.support import TRACE_EXPORT, healthz, hours_ago, spans_at
from tests.otlp_builders import span_request
from tests.server.test_crash import start_receiver

OLD_HOURS = (6, 5, 4, 3)


def _serve(db: str, archive: str) -> tuple[object, str, str]:
    grpc_port, http_port = free_port(), free_port()
    proc = start_receiver(db, grpc_port, http_port, "--retention", "1h", "--archive", archive)
    return proc, f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{http_port}"


def _sender(address: str, stop: threading.Event, acked: dict[str, str], tag: str) -> None:
    """Until stopped or the receiver dies: requests of 200 spans, half recent, half late for old windows."""
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        i = 0
        while not stop.is_set():
            old = hours_ago(OLD_HOURS[i % len(OLD_HOURS)] - 0.5)
            spans = spans_at(hours_ago(0.1), 100, f"{tag}r{i}-") + spans_at(old, 100, f"{tag}o{i}-")
            try:
                call(span_request(spans).SerializeToString(), timeout=10)
            except grpc.RpcError:
                return  # the receiver died: this request was never acknowledged
            acked.update({s["span_id"].hex(): s["name"] for s in spans})
            i += 1


def _archive_files(archive: Path) -> set[str]:
    return {p.name for p in archive.glob("signal=*/**/*") if p.is_file()}


def test_kill_9_during_archive_under_load_loses_nothing(tmp_path) -> None:
    db, archive = str(tmp_path / "live.duckdb"), tmp_path / "archive"
    acked: dict[str, str] = {}
    moments = []
    for cycle in range(2):
        proc, grpc_address, _ = _serve(db, str(archive))
        stop = threading.Event()
        sender = threading.Thread(target=_sender, args=(grpc_address, stop, acked, f"c{cycle}"))
        sender.start()
        before, deadline = _archive_files(archive), time.monotonic() + 60
        while not (new := _archive_files(archive) - before):
            assert time.monotonic() < deadline, "the receiver archived nothing"
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        stop.set()
        sender.join()
        moments.append("mid-write" if any(n.endswith(".tmp") for n in new) else "after a file")

    proc, _, http = _serve(db, str(archive))
    deadline = time.monotonic() + 90
    horizon = "now()::TIMESTAMP - INTERVAL 1 HOUR"
    live_only = "otel_agent.main.spans"  # the store's own table: the query API's `spans` is live ∪ archive
    while query_receiver(http, f"SELECT count(*) FROM {live_only} WHERE end_time < {horizon}").rows != [(0,)]:
        assert time.monotonic() < deadline, healthz(http)["lifecycle"]
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)

    con = duckdb.connect()
    con.execute("ATTACH ? AS live (READ_ONLY)", [db])
    live = [r[0] for r in con.execute("SELECT span_id FROM live.spans").fetchall()]
    archived = [
        r[0]
        for r in con.execute(
            "SELECT span_id FROM read_parquet(?, hive_partitioning = true)", [f"{archive}/signal=spans/**/*.parquet"]
        ).fetchall()
    ]
    print(f"kills: {moments}; {len(acked)} spans acknowledged, {len(archived)} archived, {len(live)} live")
    assert len(set(archived)) == len(archived), "a span archived twice"
    missing = set(acked) - set(live) - set(archived)
    assert not missing, f"{len(missing)} acknowledged spans lost, e.g. {[acked[m] for m in list(missing)[:3]]}"
    late = {i for i, name in acked.items() if "o" in name.split("-")[0][2:]}  # the spans sent for old windows
    assert late
    assert late <= set(archived), "an old span was not archived"
    assert not late & set(live), "retention left old spans in the live store"
