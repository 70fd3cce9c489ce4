"""A disk that fills up during ingest: every request is answered (acknowledged or a retryable 503 with
Retry-After, never a 500), a refused request leaves no row, every acknowledged span is stored, and ingest resumes
when space returns. A real receiver on loopback writes its store on a small real tmpfs; the same for a store
held by another process at open."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import requests

from otel_agent.errors import StoreHeldError
from otel_agent.store.database import open_store
from otel_agent.store.shards import open_read_only
from tests.otlp_builders import span_request
from tests.store.mounts import tmpfs

PAD = "x" * 2000  # per span: fills the WAL quickly


def request(n: int, tag: str) -> tuple[bytes, set[str]]:
    spans = [{"span_id": os.urandom(8), "attributes": {"pad": PAD, "tag": tag}} for _ in range(n)]
    req = span_request(spans)
    return req.SerializeToString(), {s.span_id.hex() for s in req.resource_spans[0].scope_spans[0].spans}


def post(receiver, body: bytes) -> requests.Response:
    return requests.post(
        f"{receiver.http_address}/v1/traces",
        data=body,
        headers={"Content-Type": "application/x-protobuf"},
        timeout=60,
    )


def test_a_full_disk_is_answered_retryable_and_ingest_resumes(tmp_path: Path, make_receiver) -> None:
    with tmpfs(tmp_path / "mnt", "24m") as mnt:
        receiver = make_receiver(db=str(mnt / "s.duckdb"))
        stat = os.statvfs(mnt)
        filler = mnt / "filler"
        with filler.open("wb") as f:  # leave ~2 MB for the WAL
            f.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - 2_000_000))
        acked: set[str] = set()
        refused: list[tuple[bytes, set[str]]] = []
        statuses: list[int] = []
        for i in range(60):
            body, ids = request(200, f"r{i}")
            resp = post(receiver, body)
            statuses.append(resp.status_code)
            if resp.status_code == 200:
                acked |= ids
            else:
                assert resp.status_code == 503, (resp.status_code, resp.text)
                assert int(resp.headers["Retry-After"]) >= 1
                refused.append((body, ids))
                if len(refused) >= 3:
                    break
        assert acked, f"nothing fitted at all: {statuses}"
        assert len(refused) >= 3, f"the disk never filled: {statuses}"
        assert 500 not in statuses

        filler.unlink()  # space returns
        kept_out = refused.pop()  # never re-sent: its spans must not be there
        for body, ids in refused:  # the client retries what was refused
            resp = post(receiver, body)
            assert resp.status_code == 200, resp.text
            acked |= ids
        body, ids = request(50, "after")
        assert post(receiver, body).status_code == 200
        acked |= ids
        receiver.stop()

        con = duckdb.connect(str(mnt / "s.duckdb"), read_only=True)
        try:
            stored = [r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()]
        finally:
            con.close()
        assert len(stored) == len(set(stored)), "one copy of each span"
        assert set(stored) == acked, "every acknowledged span is stored, and nothing else"
        assert not (set(stored) & kept_out[1]), "a refused request left rows behind"


def test_a_store_held_by_another_process_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    code = (
        "import sys, time; from otel_agent.store.database import open_store; con = open_store(sys.argv[1]); "
        "print('open', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        started = time.monotonic()
        for open_ in (open_store, lambda p: open_read_only([str(p)])):  # for writing, and for reading
            with pytest.raises(
                StoreHeldError, match=rf"it is locked by another process \(PID {holder.pid}, "
            ) as caught:
                open_(path)
            assert str(path) in str(caught.value)
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
