"""docs/archive.md's Trino recipe, run as written with a real Trino (476: the core server and the Iceberg plugin
from Maven Central, Java 24+ from the machine) over an archive a real receiver wrote with its Iceberg catalog in a
real PostgreSQL: Trino's count and grouped sums equal DuckDB's over the same archive's Parquet, and a time filter
reads fewer files than the table has (EXPLAIN shows the filter on the scan; EXPLAIN ANALYZE counts its splits).

Trino takes ~40-90 s to start on 2 busy cores, so this runs in its own step after ``scripts/trino_deps.sh``
(which fetches Trino once into ~/.cache/otel_agent/trino-476): ``OTEL_AGENT_TRINO=1 python -m pytest -n 0
tests/lifecycle/test_trino_recipe.py``. Without ``OTEL_AGENT_TRINO=1`` it is skipped, saying so; with it, a
missing Trino, Java 24+ or PostgreSQL is a failure. Queries go through Trino's HTTP protocol (``/v1/statement``),
what every Trino client speaks.
"""

from __future__ import annotations

import glob
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest
import requests

from tests.conftest import free_port
from tests.lifecycle.support import archive_three_days

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "archive.md"
TRINO_VERSION = "476"

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("OTEL_AGENT_TRINO") != "1",
        reason="the Trino recipe test runs on request (scripts/trino_deps.sh; OTEL_AGENT_TRINO=1)",
    ),
    pytest.mark.timeout(600),
]


def _section(name: str) -> str:
    return DOC.read_text().split(f"\n## {name}", 1)[1].split("\n## ", 1)[0]


def _trino_blocks() -> tuple[dict[str, str], list[str], str]:
    """The doc's Trino ``etc/`` files (by the path in their first line), its SQL blocks, and the DuckDB block of
    the Spark section (the same question over the Parquet copy)."""
    section = _section("Trino")
    files = {}
    for block in re.findall(r"```properties\n(.*?)```", section, re.S):
        first = block.splitlines()[0]
        if first.startswith("# etc/"):
            files[first[2:]] = block
    assert sorted(files) == [
        "etc/catalog/otel_agent.properties", "etc/config.properties", "etc/jvm.config", "etc/node.properties",
    ], files  # fmt: skip
    sql = re.findall(r"```sql\n(.*?)```", section, re.S)
    assert len(sql) == 2, sql
    [duck] = [b for b in re.findall(r"```sql\n(.*?)```", _section("Spark"), re.S) if b.startswith("-- DuckDB")]
    return files, sql, duck


def _java_home() -> str:
    """A JDK of version 24 or later: $JAVA_HOME if it is one, else the newest under /usr/lib/jvm."""

    def major(home: str) -> int:
        try:
            release = Path(home, "release").read_text()
        except OSError:
            return 0
        found = re.search(r'^JAVA_VERSION="(\d+)', release, re.M)
        return int(found[1]) if found else 0

    candidates = [os.environ.get("JAVA_HOME", ""), *sorted(glob.glob("/usr/lib/jvm/*"), key=major, reverse=True)]
    for home in candidates:
        if home and major(home) >= 24 and os.access(Path(home, "bin", "java"), os.X_OK):
            return home
    raise AssertionError(f"Trino {TRINO_VERSION} needs Java 24+; none in JAVA_HOME or /usr/lib/jvm")


def _server() -> Path:
    default = Path.home() / ".cache" / "otel_agent" / f"trino-{TRINO_VERSION}" / f"trino-server-{TRINO_VERSION}"
    server = Path(os.environ.get("OTEL_AGENT_TRINO_SERVER", default))
    assert (server / "bin" / "launcher").exists(), f"no Trino at {server}: run scripts/trino_deps.sh"
    assert (server / "plugin" / "iceberg").is_dir(), f"no Iceberg plugin in {server}/plugin"
    return server


class Trino:
    """A single-node Trino started from ``etc`` with the doc's files; queries over its HTTP protocol."""

    def __init__(self, server: Path, etc: Path, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        java = _java_home()
        env = {**os.environ, "JAVA_HOME": java, "PATH": f"{java}/bin:{os.environ.get('PATH', '')}"}
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(server / "bin" / "launcher"), "run", f"--etc-dir={etc}"],
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip

    def wait_started(self, timeout_s: float = 300) -> float:
        began = time.monotonic()
        while time.monotonic() - began < timeout_s:
            assert self.proc.poll() is None, self.log.read_text()[-5000:]
            try:
                if requests.get(f"{self.url}/v1/info", timeout=2).json().get("starting") is False:
                    # started is not yet schedulable: the coordinator's own worker registers a moment later
                    # ("No nodes available to run query" until then)
                    self.query("SELECT 1")
                    return time.monotonic() - began
            except (requests.RequestException, ValueError):
                pass
            except AssertionError as refused:
                if "No nodes available" not in str(refused):
                    raise
            time.sleep(1)
        raise AssertionError(f"Trino did not start in {timeout_s} s: {self.log.read_text()[-5000:]}")

    def query(self, sql: str) -> tuple[list[str], list[list]]:
        reply = requests.post(
            f"{self.url}/v1/statement", data=sql.encode(), headers={"X-Trino-User": "otel-agent"}, timeout=120
        ).json()
        columns, rows = None, []
        while True:
            assert "error" not in reply, (sql, reply["error"].get("message"))
            columns = columns or reply.get("columns")
            rows += reply.get("data", [])
            if "nextUri" not in reply:
                return [c["name"] for c in columns or []], rows
            reply = requests.get(reply["nextUri"], timeout=120).json()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def test_trino_reads_the_archive_as_documented(make_receiver, postgres, tmp_path, monkeypatch) -> None:
    files, (count_sql, by_model_sql), duck_sql = _trino_blocks()
    server = _server()
    url = postgres.create_database("trino_archive")

    # the archive: spans of three days, deleted into it by a real receiver's retention, its Iceberg tables
    # registered in Postgres
    archive = tmp_path / "archive"
    sent = archive_three_days(make_receiver, str(archive), iceberg_catalog=url)

    # the doc's etc/ files, with this test's values for the placeholders
    port = free_port()
    values = {
        "jdbc:postgresql://HOST:5432/DATABASE": f"jdbc:postgresql://127.0.0.1:{postgres.port}/trino_archive",
        "connection-user=USER": "connection-user=otel",
        "connection-password=PASSWORD": "connection-password=",  # trust authentication on loopback
        "/ABSOLUTE/PATH/TO/archive": str(archive),
        "/ABSOLUTE/PATH/TO/trino-data": str(tmp_path / "trino-data"),
        "8080": str(port),
    }
    for name, text in files.items():
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
        assert not re.search(r"\b(HOST|DATABASE|USER|PASSWORD|ABSOLUTE)\b", text), text
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    monkeypatch.chdir(tmp_path)  # DuckDB's block reads archive/ from the directory that holds it
    duck_by_model = [list(row) for row in duckdb.connect().execute(duck_sql).fetchall()]
    recent = [s for s in sent if s["name"].startswith("c")]  # only the 3-hours-ago spans are in the last 24 h
    want: dict[str, list[int]] = {}
    for i, s in enumerate(recent):
        m = want.setdefault(f"model-{i % 3}", [0, 0, 0])
        m[0], m[1], m[2] = m[0] + 1, m[1] + 10 + i, m[2] + s["end"] - s["start"]
    assert duck_by_model == [[k, *v] for k, v in sorted(want.items())]

    trino = Trino(server, tmp_path / "etc", port, tmp_path / "trino.log")
    try:
        started_s = trino.wait_started()
        print(f"Trino {TRINO_VERSION} started in {started_s:.0f} s")
        assert trino.query(count_sql) == (["spans"], [[len(sent)]])
        columns, by_model = trino.query(by_model_sql)
        assert columns == ["model", "spans", "input_tokens", "busy_ns"]
        assert by_model == duck_by_model

        # the time filter reaches the scan, and the scan reads one of the three days' files
        [[plan]] = trino.query("EXPLAIN " + by_model_sql)[1]
        assert re.search(r"ScanFilterProject\[table = otel_agent:otel_agent\.spans.*end_time_ts >= ", plan), plan
        [[analyzed]] = trino.query("EXPLAIN ANALYZE " + by_model_sql)[1]
        assert re.search(rf"Input: {len(recent)} rows .*Splits: 1\b", analyzed), analyzed
        _, partitions = trino.query('SELECT partition, file_count FROM otel_agent.otel_agent."spans$partitions"')
        assert sorted(p[1] for p in partitions) == [1, 1, 1], partitions  # one file per day

        # the native timestamp and the lossless nanoseconds agree
        _, [[mismatched]] = trino.query(
            "SELECT count(*) FROM otel_agent.otel_agent.spans "
            "WHERE end_time_ts != from_unixtime_nanos(end_time - end_time % 1000)"
        )
        assert mismatched == 0
    finally:
        trino.stop()
