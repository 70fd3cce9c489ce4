"""A file that cannot be a store, or cannot be written, is refused with one OtelAgentError naming the file and the
cause — at ``open_store``, at the read-only open, and through the real ``otel-agent sql --db`` (one line on stderr,
no traceback) — and the file is left as it was."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from otel_agent.errors import OtelAgentError, SchemaVersionError, StoreOpenError
from otel_agent.store.database import open_store
from otel_agent.store.shards import open_read_only
from tests.store.mounts import immutable, remount_read_only, tmpfs


def good_store(path: Path) -> Path:
    open_store(path).close()
    return path


def corrupted(tmp: Path) -> Path:
    path = good_store(tmp / "corrupted.duckdb")
    data = bytearray(path.read_bytes())
    for i in range(8192, min(len(data), 8192 * 20), 7):  # inside the first blocks, past the headers
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def truncated(tmp: Path) -> Path:
    path = good_store(tmp / "truncated.duckdb")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def text_file(tmp: Path) -> Path:
    path = tmp / "notes.duckdb"
    path.write_text("this is not a database\n" * 50)
    return path


def sqlite_file(tmp: Path) -> Path:
    path = tmp / "sqlite.duckdb"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    return path


def empty_file(tmp: Path) -> Path:
    path = tmp / "empty.duckdb"
    path.write_bytes(b"")
    return path


def foreign_duckdb(tmp: Path) -> Path:
    path = tmp / "customers.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INT)")
    con.close()
    return path


def under_a_regular_file(tmp: Path) -> Path:
    (tmp / "plain.txt").write_text("x")
    return tmp / "plain.txt" / "store.duckdb"


def a_directory(tmp: Path) -> Path:
    (tmp / "dir.duckdb").mkdir()
    return tmp / "dir.duckdb"


CASES: dict[str, tuple[Callable[[Path], Path], type[OtelAgentError], str]] = {
    "corrupted": (corrupted, StoreOpenError, "the file is corrupted"),
    "truncated": (truncated, StoreOpenError, "the file is truncated"),
    "text": (text_file, StoreOpenError, "not a DuckDB file"),
    "sqlite": (sqlite_file, StoreOpenError, "a SQLite database, not an otel_agent store"),
    "empty": (empty_file, StoreOpenError, "the file is empty"),
    "foreign-duckdb": (foreign_duckdb, SchemaVersionError, "a DuckDB file with tables but not an otel_agent store"),
    "under-a-file": (under_a_regular_file, StoreOpenError, "plain.txt is a file, not a directory"),
    "directory": (a_directory, StoreOpenError, "is a directory"),
}


def snapshot(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def sql_command(db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "otel_agent", "sql", "SELECT count(*) FROM spans", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line(done: subprocess.CompletedProcess[str], path: Path, cause: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)  # the CLI's answer to an OtelAgentError
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(path) in lines[0], lines[0]
    assert cause in lines[0], lines[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_that_is_no_store_is_refused_in_one_line(tmp_path: Path, case: str) -> None:
    make, error, cause = CASES[case]
    path = make(tmp_path)
    before = snapshot(path)
    for opener in (open_store, lambda p: open_read_only([str(p)])):
        with pytest.raises(error) as caught:
            opener(path)
        message = str(caught.value)
        assert str(path) in message, message
        assert cause in message, message
        assert "\n" not in message
        assert snapshot(path) == before, "the file is left as it was"
    # the CLI checks that the file exists first (its own one line: "no DuckDB file at PATH")
    assert_one_line(sql_command(path), path, "no DuckDB file" if case == "under-a-file" else cause)
    assert snapshot(path) == before
    assert not Path(str(path) + ".wal").exists()


def test_a_read_only_file_is_refused_for_writing_and_read_as_it_is(tmp_path: Path) -> None:
    path = good_store(tmp_path / "s.duckdb")
    before = path.read_bytes()
    with immutable(path):
        with pytest.raises(StoreOpenError, match="not writable") as caught:
            open_store(path)
        assert str(path) in str(caught.value)
        con = open_read_only([str(path)])  # reading needs no write access
        assert con.execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
        con.close()
        done = sql_command(path)
        assert done.returncode == 0, done.stderr
        assert "0" in done.stdout, done.stderr
    assert path.read_bytes() == before


def test_a_read_only_file_system_is_refused_for_writing_and_read_as_it_is(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "mnt", "16m") as mnt:
        path = good_store(mnt / "s.duckdb")
        remount_read_only(mnt)
        with pytest.raises(StoreOpenError, match="the file system is read-only") as caught:
            open_store(path)
        assert str(path) in str(caught.value)
        new = mnt / "new.duckdb"
        with pytest.raises(StoreOpenError, match="read-only") as caught:
            open_store(new)
        assert str(new) in str(caught.value)
        assert not new.exists()
        con = open_read_only([str(path)])
        assert con.execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
        con.close()
        assert sql_command(path).returncode == 0
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "otel_agent",
                "serve",
                "--db",
                str(new),
                "--grpc-endpoint",
                "127.0.0.1:0",
                "--http-endpoint",
                "127.0.0.1:0",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert_one_line(done, new, "read-only")


def test_a_missing_file_is_refused_read_only(tmp_path: Path) -> None:
    path = tmp_path / "nothing.duckdb"
    with pytest.raises(StoreOpenError, match="no such file"):
        open_read_only([str(path)])
    assert not path.exists()
    assert os.listdir(tmp_path) == []
