"""Start-up and configuration failures of ``otel-agent serve`` (issue 11 items 8-12): each is one line on stderr
and exit code 2, no traceback, from the real command in its own process; a failed start leaves no store file."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Ran, assert_one_line_failure, run_process
from tests.conftest import free_port

LOOPBACK = {"--grpc-endpoint": "127.0.0.1:0", "--http-endpoint": "127.0.0.1:0"}


def serve(db: Path, *extra: str, timeout: float = 60) -> Ran:
    args = ["serve", "--db", str(db), "--decode-workers", "0"]
    for flag, value in LOOPBACK.items():
        if flag not in extra:
            args += [flag, value]
    return run_process(*args, *extra, timeout=timeout)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Path, dict]]:
    """A real ``otel-agent serve`` holding a store; yields the store and its discovery file's content."""
    db = tmp_path / "held.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", "serve", "--db", str(db), "--decode-workers", "0",
         "--grpc-endpoint", "127.0.0.1:0", "--http-endpoint", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    discovery = Path(str(db) + ".receiver.json")
    deadline = time.monotonic() + 60
    while not discovery.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "receiver did not start"
        time.sleep(0.1)
    info = json.loads(discovery.read_text())
    assert info["pid"] == proc.pid
    try:
        yield db, info
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_a_store_another_receiver_holds_names_that_receiver(running: tuple[Path, dict]) -> None:
    db, info = running
    line = assert_one_line_failure(serve(db), str(db), f"pid {info['pid']}", info["grpc"], info["http"])
    assert "Could not set lock" not in line


def test_a_store_another_process_has_locked_names_its_pid(tmp_path: Path) -> None:
    db = tmp_path / "locked.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print('ok', flush=True); "
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ok"
        assert_one_line_failure(serve(db), str(db), "locked by another process", f"PID {holder.pid}")
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(
    ("endpoint", "fragment"),
    [
        ("127.0.0.1:99999", "port 99999 is outside 1-65535"),
        ("127.0.0.1:-5", "port '-5' is not a number"),
        ("localhost", "'localhost' has no port"),
        ("127.0.0.1:", "has no port"),
        ("bad host:4317", "'bad host' is not a host name or IP address"),
        ("999.1.2.3:4317", "'999.1.2.3' is not a host name or IP address"),
        ("::1:4317", "an IPv6 address needs brackets"),
        ("[zz::1]:4317", "is not an IPv6 address"),
    ],
)
@pytest.mark.parametrize("flag", ["--grpc-endpoint", "--http-endpoint"])
def test_bad_endpoints_are_refused(tmp_path: Path, flag: str, endpoint: str, fragment: str) -> None:
    db = tmp_path / "never.duckdb"
    assert_one_line_failure(serve(db, flag, endpoint), flag, fragment)
    assert list(tmp_path.iterdir()) == []


def test_bad_endpoint_from_the_environment_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "never.duckdb"
    ran = run_process("serve", "--db", str(db), env={"OTEL_AGENT_GRPC_ENDPOINT": "localhost"})
    assert_one_line_failure(ran, "'localhost' has no port")


@pytest.mark.parametrize("flag", ["--grpc-endpoint", "--http-endpoint"])
def test_a_port_in_use_is_named_and_no_store_is_left(tmp_path: Path, flag: str) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        db = tmp_path / "new.duckdb"
        ran = serve(db, flag, f"127.0.0.1:{port}")
    line = assert_one_line_failure(ran, flag, f"127.0.0.1:{port}", f"port {port} is in use")
    assert "E0000" not in ran.stderr
    assert "Failed to add port" not in ran.stderr
    assert "chttp2" not in ran.stderr
    assert line.startswith("Error: cannot listen on")
    assert list(tmp_path.iterdir()) == [], "a failed start must not leave a new store file"


def test_a_failed_start_keeps_an_existing_store(tmp_path: Path) -> None:
    db = tmp_path / "kept.duckdb"
    first = run_process("sql", "SELECT 1", "--db", str(db))  # no file yet: refused, nothing created
    assert_one_line_failure(first, "no DuckDB file at")
    from otel_agent.store.database import open_store

    open_store(db).close()
    size = db.stat().st_size
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        ran = serve(db, "--http-endpoint", f"127.0.0.1:{blocker.getsockname()[1]}")
    assert_one_line_failure(ran, "is in use")
    assert db.exists()
    assert db.stat().st_size == size


def test_log_level_is_restricted_to_its_choices(tmp_path: Path) -> None:
    db = tmp_path / "never.duckdb"
    line = assert_one_line_failure(serve(db, "--log-level", "loud"), "--log-level", "'loud' is not one of")
    for level in ("debug", "info", "warning", "error"):
        assert level in line
    from_env = run_process("serve", "--db", str(db), env={"OTEL_AGENT_LOG_LEVEL": "loud"})
    assert_one_line_failure(from_env, "'loud' is not one of")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ('{"tokens": [{"token": "t", "roles": ["ingest"]}]}', ["tokens[0]", "missing field 'principal'"]),
        ('[{"token": "t", "principal": "p"}]', ['expected an object {"tokens": [...]}', "found list"]),
        ('{"tokens": []}', ['"tokens" is empty']),
        ('{"tokenz": []}', ['no "tokens" field']),
        (
            '{"tokens": [{"token": "same", "principal": "alice", "roles": ["query"]},'
            ' {"token": "same", "principal": "bob", "roles": ["ingest"]}]}',
            ["tokens[1] (principal 'bob')", "field 'token' repeats the token of tokens[0] (principal 'alice')"],
        ),
        (
            '{"tokens": [{"token": "a", "principal": "alice"},'
            ' {"token_sha256": "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", "principal": "b"}]}',
            ["tokens[1] (principal 'b')", "field 'token_sha256' repeats the token of tokens[0]"],
        ),
        ('{"tokens": [{"token": "t", "principal": "p", "roles": ["admin"]}]}', ["field 'roles'", "'admin'"]),
        ('{"tokens": [{"token": "t", "principal": "p", "roles": "query"}]}', ["field 'roles' must be a list"]),
        ('{"tokens": [{"principal": "p"}]}', ["tokens[0] (principal 'p')", "'token' and 'token_sha256'"]),
        ('{"tokens": [{"token_sha256": "xyz", "principal": "p"}]}', ["field 'token_sha256' must be 64 hex"]),
        ('{"tokens": [{"token": "t", "principal": "p", "role": ["query"]}]}', ["unknown field 'role'"]),
        ('{"tokens": ["t"]}', ["tokens[0] must be an object"]),
        ("not json", ["cannot read tokens file", "not JSON"]),
    ],
)
def test_a_bad_tokens_file_names_the_entry_and_the_field(tmp_path: Path, content: str, fragments: list[str]) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(content)
    db = tmp_path / "never.duckdb"
    assert_one_line_failure(serve(db, "--tokens-file", str(tokens)), str(tokens), *fragments)
    assert not db.exists()


def test_a_missing_tokens_file_is_one_line(tmp_path: Path) -> None:
    assert_one_line_failure(serve(tmp_path / "x.duckdb", "--tokens-file", str(tmp_path / "absent.json")), "absent.json")


def test_a_store_path_under_a_regular_file_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "plain"
    afile.write_text("not a directory")
    assert_one_line_failure(serve(afile / "x.duckdb"), "plain")


def test_serve_still_starts_and_stops(tmp_path: Path) -> None:
    """The checks refuse only what is wrong: a fixed free port starts, SIGTERM stops with exit code 0."""
    db = tmp_path / "ok.duckdb"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", "serve", "--db", str(db), "--decode-workers", "0",
         "--grpc-endpoint", "127.0.0.1:0", "--http-endpoint", f"localhost:{port}", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    discovery = Path(str(db) + ".receiver.json")
    deadline = time.monotonic() + 60
    while not discovery.exists():
        assert proc.poll() is None
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert json.loads(discovery.read_text())["http"] == f"http://localhost:{port}"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert db.exists()
    assert not discovery.exists()


def test_a_stale_discovery_file_does_not_block_a_start(tmp_path: Path) -> None:
    """After a kill -9 the discovery file stays; its pid is gone, so it names no holder."""
    from otel_agent.store.discovery import read_discovery

    db = tmp_path / "stale.duckdb"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    Path(str(db) + ".receiver.json").write_text(
        json.dumps({"pid": int(gone.stdout), "grpc": "127.0.0.1:1", "http": "http://127.0.0.1:2"})
    )
    assert read_discovery(db) is None
    Path(str(db) + ".receiver.json").write_text("{not json")
    assert read_discovery(db) is None
