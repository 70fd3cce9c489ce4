"""The CLI in a terminal: tables fit its width (in a real pseudo-terminal), ``--wide`` and ``--columns``, numbers
rounded for reading, JSON values as JSON, and every mistake — an unknown id, an unreachable receiver, a missing
store, a busy port, a store in a missing directory — one line on stderr with exit code 2 that says what to try."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import select
import socket
import struct
import subprocess
import sys
import termios
from pathlib import Path

import click
import pytest

from tests.cli.conftest import RUN_ID, assert_one_line_failure, invoke, run_process
from tests.conftest import free_port


def in_a_terminal(*args: str, columns: int, timeout: float = 60) -> list[str]:
    """``otel-agent ARGS`` with its stdout and stderr on a pseudo-terminal ``columns`` wide; its lines."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # the terminal's size decides
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent", *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            assert ready, f"no output from {args} in {timeout} s"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        assert proc.wait(timeout=timeout) == 0, out.decode(errors="replace")
    return click.unstyle(out.decode()).replace("\r\n", "\n").splitlines()  # what the eye sees: no colour codes


@pytest.mark.parametrize("command", [["runs"], ["cost"], ["claims"], ["artifacts"], ["metrics", RUN_ID]])
def test_tables_fit_a_120_column_terminal(cli_store: Path, command: list[str]) -> None:
    lines = in_a_terminal(*command, "--db", str(cli_store), columns=120)
    assert lines
    assert max(len(line) for line in lines) <= 120, "\n".join(lines)


def test_a_narrow_terminal_names_the_columns_left_out_and_wide_shows_them(cli_store: Path) -> None:
    narrow = in_a_terminal("runs", "--db", str(cli_store), columns=80)
    assert max(len(line) for line in narrow) <= 80
    header, footer = narrow[0].split(), narrow[-1]
    assert header[0] == "run_id"
    assert "status" in header
    assert "cost_usd" in header  # money keeps its place before other columns
    assert "more columns:" in footer
    assert "--wide shows all" in footer
    left_out = [name for name in footer.split("more columns: ")[1].split("; --wide")[0].split(", ") if "…" not in name]
    assert left_out
    assert not set(left_out) & set(header)
    wide = in_a_terminal("runs", "--db", str(cli_store), "--wide", columns=80)
    assert set(left_out) <= set(wide[0].split())
    assert max(len(line) for line in wide) > 80
    assert "more columns" not in wide[-1]


@pytest.mark.parametrize("command", [["run", RUN_ID], ["manifest", RUN_ID]])
def test_drawings_are_cut_to_a_narrow_terminal_and_wide_keeps_them(cli_store: Path, command: list[str]) -> None:
    narrow = in_a_terminal(*command, "--db", str(cli_store), columns=50)
    assert max(len(line) for line in narrow) <= 50
    assert "(cut to fit; --wide shows all)" in narrow or "--wide shows all)" in narrow[-1]  # a drawing or a table
    wide = in_a_terminal(*command, "--db", str(cli_store), "--wide", columns=50)
    assert max(len(line) for line in wide) > 50
    assert "(cut to fit; --wide shows all)" not in wide


def test_columns_chooses_and_orders_them_in_every_format(cli_store: Path) -> None:
    out = invoke("runs", "--db", str(cli_store), "--columns", "status,run_id", "--format", "csv").stdout
    assert next(csv.reader(io.StringIO(out))) == ["status", "run_id"]
    [row] = json.loads(invoke("runs", "--db", str(cli_store), "--columns", "run_id", "--format", "json").stdout)
    assert row == {"run_id": RUN_ID}
    ran = invoke("runs", "--db", str(cli_store), "--columns", "run_id,nope", code=2)
    assert "nope" in ran.stderr
    assert "run_id" in ran.stderr  # the columns there are


def test_numbers_are_rounded_for_reading(cli_store: Path) -> None:
    sql = (
        "SELECT 1839.591433::DOUBLE AS a, 12.3456::DOUBLE AS b, 1.23456::DOUBLE AS c, 0.230507::DOUBLE AS d, "
        "4.0::DOUBLE AS e"
    )
    out = invoke("sql", sql, "--db", str(cli_store)).stdout.splitlines()
    assert out[2].split() == ["1840", "12.3", "1.23", "0.231", "4"]
    text = invoke("sql", sql, "--db", str(cli_store), "--format", "csv").stdout
    assert "1839.591433" in text  # csv keeps every digit


def test_json_carries_json_values_as_json(cli_store: Path) -> None:
    db = str(cli_store)
    [row] = json.loads(invoke("sql", "SELECT attributes FROM spans LIMIT 1", "--db", db, "--format", "json").stdout)
    assert isinstance(row["attributes"], dict)
    assert row["attributes"]
    [row] = json.loads(invoke("sql", "SELECT '{\"a\": 1}' AS text", "--db", db, "--format", "json").stdout)
    assert row["text"] == '{"a": 1}'  # a string that looks like JSON stays a string


def test_metrics_write_money_with_a_dollar(cli_store: Path) -> None:
    out = invoke("metrics", RUN_ID, "--db", str(cli_store)).stdout
    [cost] = [line for line in out.splitlines() if line.startswith("cost.total_usd")]
    assert "$0.000075" in cost


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["cost", "--run", "nope"], "no run 'nope'"),
        (["claims", "--run", "nope"], "no run 'nope'"),
        (["artifacts", "--run", "nope"], "no run 'nope'"),
        (["repairs", "--run", "nope"], "no run 'nope'"),
        (["candidates", "nope"], "no artifact 'nope'"),
        (["metrics", "nope"], "no run 'nope'"),
        (["run", "nope"], "no run 'nope'"),
        (["lineage", "nope"], "'nope'"),
    ],
)
def test_an_unknown_id_is_one_line_and_exit_2(cli_store: Path, args: list[str], fragment: str) -> None:
    ran = invoke(*args, "--db", str(cli_store), code=2)
    assert_one_line_failure(ran, fragment)


def test_a_known_run_without_matching_rows_is_an_empty_table(cli_store: Path) -> None:
    out = invoke("claims", "--run", RUN_ID, "--status", "rejected", "--db", str(cli_store)).stdout
    assert out.strip().endswith("(0 rows)")


def test_an_unreachable_receiver_is_one_line_naming_it_and_what_to_try() -> None:
    port = free_port()
    ran = run_process("runs", "--receiver", f"127.0.0.1:{port}")
    line = assert_one_line_failure(ran, f"http://127.0.0.1:{port}", "otel-agent serve", "--db")
    assert "HTTPConnectionPool" not in line
    assert "Max retries" not in line


def test_a_missing_store_says_how_to_name_one(tmp_path: Path) -> None:
    ran = run_process("runs", cwd=tmp_path)
    assert_one_line_failure(ran, "no DuckDB file at ./otel_agent.duckdb", "--db", "OTEL_AGENT_DB", "--receiver")


def test_ui_on_a_busy_port_names_it_and_port(cli_store: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ran = run_process("ui", "--db", str(cli_store), "--port", str(port))
    assert_one_line_failure(ran, f"port {port}", "in use", "--port")


def test_serve_refuses_a_store_in_a_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "not" / "there"
    ran = run_process("serve", "--db", str(missing / "x.duckdb"), "--grpc-endpoint", "127.0.0.1:0",
                      "--http-endpoint", "127.0.0.1:0")  # fmt: skip
    assert_one_line_failure(ran, str(missing), "does not exist")
    assert not (tmp_path / "not").exists()
