"""Fixtures for the derived run views: a loopback-only network guard (every test here) and the demo store
written from our own helpers (tests/derived_runs/scenario.py)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.derived_runs.runs_support import write_store
from tests.derived_runs.scenario import demo_spans


def _loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection beyond loopback (the openai client and the Agents SDK must never go out)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise ConnectionRefusedError(f"test network guard: {address!r} is not loopback")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OTEL_AGENT_PRICES", "TRACELOOP_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    return write_store(tmp_path_factory.mktemp("demo") / "demo.duckdb", demo_spans())
