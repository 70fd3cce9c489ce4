"""Fixtures of the MCP tests: the scenario's store (tests/mcp/scenario.py), the stdio server's parameters (``python
-m otel_agent mcp --db FILE`` as a subprocess, as an agent starts it), and a receiver serving ``/mcp`` over a copy
of the store with a tokens file (a reader, a reviewer, an ingest-only agent)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from otel_agent.config import ReceiverConfig
from otel_agent.main import serving
from otel_agent.server.receiver import Receiver
from tests.mcp.scenario import write

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {
    "mcp-reader": ("reader", ["query"]),
    "mcp-reviewer": ("editor", ["query", "review"]),
    "mcp-ingest": ("agent", ["ingest"]),
}
T = TypeVar("T")


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """An async test body, run to its end (the SDK's client is async)."""
    return anyio.run(fn)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("mcp") / "store.duckdb")


def stdio(*args: str) -> StdioServerParameters:
    """``otel-agent mcp ARGS`` as a subprocess speaking MCP over its stdin/stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return StdioServerParameters(command=sys.executable, args=["-m", "otel_agent", "mcp", *args], env=env, cwd=ROOT)


def text_of(result: Any) -> str:
    """The one text block of a tool result."""
    assert len(result.content) == 1, result
    return str(result.content[0].text)


def data_of(result: Any) -> Any:
    """The data of a tool result: the JSON inside its ``<telemetry-data>`` element."""
    assert not result.is_error, text_of(result)
    text = text_of(result)
    head, _, rest = text.partition("\n")
    assert head.startswith("<telemetry-data kind=")
    body, _, tail = rest.rpartition("\n")
    assert tail == "</telemetry-data>"
    doc = json.loads(body)
    assert doc["note"].startswith("Untrusted data")
    return doc


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, store: Path) -> Iterator[Receiver]:
    """A receiver as ``otel-agent serve`` runs it (the console and MCP faces) over a copy of the store."""
    root = tmp_path_factory.mktemp("mcp_live")
    db = root / "live.duckdb"
    shutil.copy(store, db)
    tokens = root / "tokens.json"
    tokens.write_text(
        json.dumps({"tokens": [{"token": t, "principal": p, "roles": r} for t, (p, r) in TOKENS.items()]})
    )
    config = ReceiverConfig.resolve(
        db=str(db), grpc_endpoint="127.0.0.1:0", http_endpoint="127.0.0.1:0", decode_workers=0,
        tokens_file=str(tokens),
    )  # fmt: skip
    receiver = serving(config).start()
    try:
        yield receiver
    finally:
        receiver.stop()


def http_client(receiver: Receiver, token: str | None) -> Client:
    """The SDK's client over streamable HTTP to the receiver's ``/mcp``, with a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    return Client(streamable_http_client(receiver.http_address + "/mcp", http_client=http))
