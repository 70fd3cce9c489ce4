"""kill -9 while a client sends: every span the client saw acknowledged is in the file after restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import duckdb
import grpc
import psutil

from tests.conftest import free_port, new_store
from tests.lifecycle.support import healthz
from tests.otlp_builders import span_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def start_receiver(db: str, grpc_port: int, http_port: int, *extra: str) -> subprocess.Popen:
    """``otel-agent serve`` as a subprocess, in its own process group (so a test can signal the group); a new
    ``db`` is a copy of an empty store (``new_store``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", "serve", "--db", new_store(db),
         "--grpc-endpoint", f"127.0.0.1:{grpc_port}",
         "--http-endpoint", f"127.0.0.1:{http_port}", "--log-level", "warning", *extra],
        start_new_session=True,
    )  # fmt: skip
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{http_port}/healthz", timeout=1).read()
            return proc
        except OSError:  # not listening yet, or 503 while its decode workers start
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("receiver did not start")


class AckedLoad:
    """``clients`` threads exporting spans over gRPC to ``grpc_port`` until stopped or refused; ``acked`` holds
    the span ids of every request the receiver acknowledged (what it must never lose)."""

    def __init__(self, grpc_port: int, clients: int, spans_per_request: int) -> None:
        self.acked: list[str] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._client, args=(grpc_port, spans_per_request, w)) for w in range(clients)
        ]
        for t in self._threads:
            t.start()

    def _client(self, grpc_port: int, spans_per_request: int, worker: int) -> None:
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
            i = 0
            while not self._stop.is_set():
                req = span_request([{"name": f"w{worker}-r{i}-s{k}"} for k in range(spans_per_request)])
                try:
                    call(req.SerializeToString(), timeout=10)
                except grpc.RpcError:
                    return  # the receiver died or stopped: this request was never acknowledged
                self.acked.extend(s.span_id.hex() for s in req.resource_spans[0].scope_spans[0].spans)
                i += 1

    def wait_for(self, spans: int) -> None:
        deadline = time.monotonic() + 120
        while len(self.acked) < spans:
            assert time.monotonic() < deadline, f"only {len(self.acked)} spans acknowledged in 120 s"
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


def stored_span_ids(db: str) -> set[str]:
    con = duckdb.connect(db, read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()}
    finally:
        con.close()


def receiver_under_load(
    db: str, clients: int, spans_per_request: int, acked: int, *extra: str, http_port: int = 0
) -> tuple[subprocess.Popen, AckedLoad]:
    """``otel-agent serve`` on ``db`` with ``clients`` exporting to it, once ``acked`` spans are acknowledged."""
    grpc_port = free_port()
    proc = start_receiver(db, grpc_port, http_port or free_port(), *extra)
    load = AckedLoad(grpc_port, clients, spans_per_request)
    load.wait_for(acked)
    return proc, load


def test_kill_9_loses_nothing_acknowledged(tmp_path):
    db = str(tmp_path / "crash.duckdb")
    proc, load = receiver_under_load(db, clients=4, spans_per_request=50, acked=5_000)
    kill_9_and_check(db, proc, load)


def test_kill_9_while_the_store_is_reattached_again_and_again_loses_nothing(tmp_path):
    """With a block-cache share so small that the writer detaches and attaches the store after nearly every
    checkpoint (otel_agent/store/recycle.py), a kill -9 in the middle still loses nothing acknowledged."""
    db, http_port = str(tmp_path / "reattached.duckdb"), free_port()
    tight = ("--memory-limit", "64MB", "--checkpoint-threshold", "256kB", "--block-cache-share", "0.005")
    proc, load = receiver_under_load(db, 4, 50, 5_000, *tight, http_port=http_port)
    deadline = time.monotonic() + 60
    while (reattaches := healthz(f"http://127.0.0.1:{http_port}")["store_reattaches"]) < 3:
        assert time.monotonic() < deadline, f"{reattaches} re-attaches in 60 s"
        time.sleep(0.05)
    kill_9_and_check(db, proc, load)


def kill_9_and_check(db: str, proc: subprocess.Popen, load: AckedLoad) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: serve and its decode workers at once
    proc.wait()
    load.stop()
    assert len(load.acked) >= 5_000

    # Restart on the same file: the WAL is replayed, and every acknowledged span is there.
    proc = start_receiver(db, free_port(), free_port())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    stored = stored_span_ids(db)
    missing = set(load.acked) - stored
    assert not missing, f"{len(missing)} acknowledged spans lost of {len(load.acked)}"


def test_kill_9_of_serve_leaves_no_process_behind(tmp_path):
    """The decode workers die with the receiver (PR_SET_PDEATHSIG, and their connection closing), and
    there is no multiprocessing resource tracker to survive it: only ``serve`` itself is killed here."""
    proc = start_receiver(str(tmp_path / "orphans.duckdb"), free_port(), free_port(), "--decode-workers", "2")
    serve = psutil.Process(proc.pid)
    children = serve.children(recursive=True)
    workers = [c for c in children if "otel_agent.ingest.decode_worker" in " ".join(c.cmdline())]
    assert len(workers) == 2, [c.cmdline() for c in children]
    assert not [c for c in children if "resource_tracker" in " ".join(c.cmdline())]
    proc.send_signal(signal.SIGKILL)  # the process only, not its group
    proc.wait()
    gone, alive = psutil.wait_procs(children, timeout=5)
    assert not alive, [(p.pid, p.cmdline()) for p in alive]
    assert {p.pid for p in gone} == {c.pid for c in children}
