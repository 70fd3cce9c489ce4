"""A relative ``--archive`` (``serve --archive archive``, ``sql --archive archive``) is a directory under the
working directory, as ``--help`` says: the real commands in their own processes, run from a temporary directory,
write and read it there (pyarrow alone takes only absolute paths: "URI has empty scheme")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.cli.conftest import run_process
from tests.conftest import free_port
from tests.lifecycle.support import healthz, hours_ago, query_api, send, spans_at


def _serve(cwd: Path, *args: str) -> tuple[subprocess.Popen, str, str]:
    grpc_port, http_port = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", "serve", "--grpc-endpoint", f"127.0.0.1:{grpc_port}",
         "--http-endpoint", f"127.0.0.1:{http_port}", "--log-level", "warning", *args],
        cwd=cwd, start_new_session=True,
    )  # fmt: skip
    http = f"http://127.0.0.1:{http_port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(http + "/healthz", timeout=1).read()
            return proc, f"127.0.0.1:{grpc_port}", http
        except OSError:
            assert proc.poll() is None, "the receiver exited"
            assert time.monotonic() < deadline, "receiver did not start"
            time.sleep(0.1)


def test_serve_and_sql_take_a_relative_archive(tmp_path) -> None:
    proc, grpc_address, http = _serve(tmp_path, "--db", "store.duckdb", "--archive", "archive", "--retention", "1h")
    try:
        old, recent = spans_at(hours_ago(5), 120, "old"), spans_at(hours_ago(0.1), 30, "recent")
        send(grpc_address, old + recent)
        deadline = time.monotonic() + 60
        while (report := healthz(http)["lifecycle"])["rows_deleted"].get("spans", 0) < len(old):
            assert time.monotonic() < deadline, report
            time.sleep(0.1)
        assert report["archive"] == str(tmp_path / "archive")  # resolved against the receiver's working directory
        assert report["iceberg_appends"] >= 1
        live = type("Live", (), {"http_address": http})()
        assert query_api(live, "SELECT count(*) FROM spans") == [[150]]  # live ∪ the relative archive
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    archived = list((tmp_path / "archive" / "signal=spans").rglob("*.parquet"))
    assert archived
    assert (tmp_path / "archive" / "iceberg_catalog.db").is_file()

    sql = "SELECT count(*) AS n, count(*) FILTER (WHERE name LIKE 'old%') AS old FROM spans"
    ran = run_process("sql", "--db", "store.duckdb", "--archive", "archive", "--format", "json", sql, cwd=tmp_path)
    assert ran.code == 0, ran.stderr
    assert json.loads(ran.stdout) == [{"n": 150, "old": 120}]
    day = hours_ago(5).date().isoformat()
    bounded = f"archive?since={day}"  # a relative path keeps its reading bounds
    ran = run_process("sql", "--db", "store.duckdb", "--archive", bounded, "--format", "json", sql, cwd=tmp_path)
    assert ran.code == 0, ran.stderr
    assert json.loads(ran.stdout) == [{"n": 150, "old": 120}]
