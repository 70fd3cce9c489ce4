"""Shared fixtures: real receivers on ephemeral loopback ports over real DuckDB files."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from otel_agent.config import ReceiverConfig
from otel_agent.server.receiver import Receiver
from otel_agent.store.database import store_cursor

# The whole suite runs the instrumentation helpers in strict mode: a misuse raises instead of being logged and
# recorded on its span (docs/semconv.md, "When a helper is misused"). Subprocesses inherit it. Tests of the
# lenient default turn it off for themselves.
os.environ["OTEL_AGENT_STRICT"] = "1"


# Parallel runs (pytest-xdist, ``-n auto --dist loadgroup`` in pyproject.toml): the tests of one module go to one
# worker together, so a module-scoped fixture (a receiver, a store, a browser) is set up once. A test or module
# marked ``@pytest.mark.xdist_group("NAME")`` joins group NAME instead (several modules sharing a session-scoped
# fixture, e.g. every console module over the demo store; or tests that must not run beside each other's ports).
SHARED_GROUPS = {"tests/console": "console"}
"""Folders whose modules share session-scoped fixtures: one group (one worker) for the whole folder."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            module = item.nodeid.split("::", 1)[0]
            folder = module.rsplit("/", 1)[0]
            item.add_marker(pytest.mark.xdist_group(SHARED_GROUPS.get(folder, module)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_receiver(db: str | Path, **overrides: Any) -> Receiver:
    """A receiver started in this process on ephemeral loopback ports over ``db``, decoding in the request
    thread (``decode_workers=0``: fast to start) unless ``overrides`` say otherwise; the caller stops it."""
    settings: dict[str, Any] = {
        "db": str(db),
        "grpc_endpoint": "127.0.0.1:0",
        "http_endpoint": "127.0.0.1:0",
        "decode_workers": 0,
    }
    settings.update(overrides)
    return Receiver(ReceiverConfig.resolve(**settings)).start()


@pytest.fixture
def make_receiver(tmp_path: Path) -> Iterator[Callable[..., Receiver]]:
    """Start receivers in this process; each is stopped (and its data committed) at teardown.

    Settings are ReceiverConfig fields; decode_workers defaults to 0 here (decode in the request thread)
    so tests start fast — tests of the worker-process path pass decode_workers explicitly.
    """
    started: list[Receiver] = []

    def start(**overrides: Any) -> Receiver:
        receiver = start_receiver(overrides.pop("db", tmp_path / f"store{len(started)}.duckdb"), **overrides)
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        if receiver._started:
            receiver.stop()


@pytest.fixture
def receiver(make_receiver: Callable[..., Receiver]) -> Receiver:
    return make_receiver()


def rows(receiver: Receiver, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """Committed rows, read through a cursor of the receiver's own connection (as the query API does)."""
    cur = store_cursor(receiver.con)
    try:
        return cur.execute(sql, params or []).fetchall()
    finally:
        cur.close()


@contextmanager
def serve_ui(*args: str) -> Iterator[str]:
    """``otel-agent ui ARGS --port 0`` as a real process: yields its base URL (``http://127.0.0.1:PORT``, read
    from the first line it prints); at exit SIGTERM, which must end it with exit code 0."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "otel_agent.cli", "ui", *args, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert found, line + (proc.stdout.read() if proc.poll() is not None else "")
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
