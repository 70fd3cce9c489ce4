"""Clean stops of ``otel-agent serve`` under load: SIGTERM to its process group (what ``timeout`` and systemd
send), Ctrl-C (SIGINT to the group, as a terminal sends it) and SIGTERM to the main process alone each end with
exit code 0, every acknowledged span committed, no traceback, no decode worker "lost" and replaced, and no
process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.conftest import free_port, new_store
from tests.server.test_crash import AckedLoad, stored_span_ids

STOPS = {
    "sigterm-to-the-group": lambda pid: os.killpg(pid, signal.SIGTERM),
    "sigint-to-the-group": lambda pid: os.killpg(pid, signal.SIGINT),
    "sigterm-to-the-main-process": lambda pid: os.kill(pid, signal.SIGTERM),
}


def start_serve(db: str, grpc_port: int, http_port: int, log: Path) -> subprocess.Popen:
    """``otel-agent serve`` (default log level: a replaced worker would be logged) in a session of its own,
    its output into ``log``; a new ``db`` is a copy of an empty store (``new_store``)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "otel_agent", "serve", "--db", new_store(db),
             "--grpc-endpoint", f"127.0.0.1:{grpc_port}",
             "--http-endpoint", f"127.0.0.1:{http_port}"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{http_port}/healthz", timeout=1).read()
            return proc
        except OSError:  # not listening yet, or 503 while its decode workers start
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"receiver did not start: {log.read_text()}")


@pytest.mark.parametrize("how", sorted(STOPS))
def test_a_clean_stop_under_load_commits_everything_acknowledged(tmp_path: Path, how: str) -> None:
    db, log = str(tmp_path / "stop.duckdb"), tmp_path / "serve.log"
    grpc_port, http_port = free_port(), free_port()
    proc = start_serve(db, grpc_port, http_port, log)
    family = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
    assert len(family) >= 3  # the receiver and its two decode workers
    load = AckedLoad(grpc_port, clients=2, spans_per_request=50)
    try:
        load.wait_for(2_000)
        STOPS[how](proc.pid)
        code = proc.wait(timeout=60)
    finally:
        load.stop()
        if proc.poll() is None:
            proc.kill()
    output = log.read_text()
    assert code == 0, output
    assert "Traceback" not in output
    assert "replacement" not in output
    assert "lost" not in output
    assert "stopped;" in output
    acked = set(load.acked)
    assert len(acked) >= 2_000
    assert acked <= stored_span_ids(db)
    assert [pid for pid in family if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"] == []
