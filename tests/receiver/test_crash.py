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

from tests.conftest import free_port
from tests.otlp_builders import span_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def start_receiver(db: str, grpc_port: int, http_port: int, *extra: str) -> subprocess.Popen:
    """``otel-agent serve`` as a subprocess, in its own process group (so a test can signal the group)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent.cli", "serve", "--db", db, "--grpc-endpoint", f"127.0.0.1:{grpc_port}",
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


def test_kill_9_loses_nothing_acknowledged(tmp_path):
    db = str(tmp_path / "crash.duckdb")
    grpc_port, http_port = free_port(), free_port()
    proc = start_receiver(db, grpc_port, http_port)
    acked: list[str] = []
    stop = threading.Event()

    def client(worker: int) -> None:
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        i = 0
        while not stop.is_set():
            req = span_request([{"name": f"w{worker}-r{i}-s{k}"} for k in range(50)])
            ids = [s.span_id.hex() for s in req.resource_spans[0].scope_spans[0].spans]
            try:
                call(req.SerializeToString(), timeout=5)
            except grpc.RpcError:
                return  # the receiver died: this request was never acknowledged
            acked.extend(ids)
            i += 1

    clients = [threading.Thread(target=client, args=(w,)) for w in range(4)]
    for c in clients:
        c.start()
    while len(acked) < 5_000:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: serve and its decode workers at once
    proc.wait()
    stop.set()
    for c in clients:
        c.join()
    assert len(acked) >= 5_000

    # Restart on the same file: the WAL is replayed, and every acknowledged span is there.
    proc = start_receiver(db, free_port(), free_port())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    con = duckdb.connect(db, read_only=True)
    stored = {r[0] for r in con.execute("SELECT span_id FROM spans").fetchall()}
    con.close()
    missing = set(acked) - stored
    assert not missing, f"{len(missing)} acknowledged spans lost of {len(acked)}"


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
