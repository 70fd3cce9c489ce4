"""The console under test: a real receiver (``otel-agent serve``'s object) on a copy of the demo store with a
tokens file and hostile spans sent over OTLP/HTTP, and one headless Chromium (Debian's, /usr/bin/chromium) per
session, driven by Playwright. Screenshots go to the session's tmp dir (and to $CONSOLE_SHOTS when set)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from otel_agent.config import ReceiverConfig
from otel_agent.main import serving
from otel_agent.server.receiver import Receiver
from otel_agent.store.database import store_cursor
from tests.demo.conftest import otlp_demo  # noqa: F401  (the demo store, built once per session)
from tests.otlp_builders import T0, post_traces, span_request

CHROMIUM = "/usr/bin/chromium"
TOKENS = {
    "alice-review": ("alice", ["query", "review"]),
    "bob-query": ("bob", ["query"]),
    "agent-ingest": ("research-agent", ["ingest"]),
}
XSS_NAME = "<script>window.__xss=1</script>"
XSS_ATTR = "<img src=x onerror=window.__xss=2>"
XSS_EVENT = "<svg onload=window.__xss=3>"
XSS_TRACE = bytes.fromhex("0badc0de" * 4)
XSS_SPAN = bytes.fromhex("5ca1ab1e" * 2)


@dataclass
class Live:
    receiver: Receiver
    url: str
    db: str

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with store_cursor(self.receiver.con) as cur:
            return cur.execute(sql, params or []).fetchall()


def hostile_request() -> bytes:
    """A trace of no run of ours whose name, attributes, model and exception message are HTML/script payloads."""
    req = span_request(
        [
            {
                "trace_id": XSS_TRACE, "span_id": XSS_SPAN, "name": XSS_NAME, "start": T0, "end": T0 + 3_000_000,
                "attributes": {"payload": XSS_ATTR, "gen_ai.operation.name": "chat", "gen_ai.request.model": XSS_ATTR,
                               "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 5},
            },
        ],
        service='"><b>evil-svc</b>',
    )  # fmt: skip
    span = req.resource_spans[0].scope_spans[0].spans[0]
    event = span.events.add()
    event.name = "exception"
    event.time_unix_nano = T0 + 1_000_000
    attr = event.attributes.add()
    attr.key, attr.value.string_value = "exception.message", XSS_EVENT
    span.status.code = 2
    span.status.message = XSS_EVENT
    return req.SerializeToString()


@pytest.fixture(scope="session")
def live(otlp_demo: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:  # noqa: F811
    """A receiver with authentication on a copy of the demo store, plus the hostile trace sent over OTLP/HTTP."""
    root = tmp_path_factory.mktemp("console_live")
    db = str(root / "demo.duckdb")
    shutil.copy(otlp_demo.db, db)
    tokens = root / "tokens.json"
    tokens.write_text(
        json.dumps({"tokens": [{"token": t, "principal": p, "roles": r} for t, (p, r) in TOKENS.items()]})
    )
    config = ReceiverConfig.resolve(
        db=db, grpc_endpoint="127.0.0.1:0", http_endpoint="127.0.0.1:0", decode_workers=0, tokens_file=str(tokens)
    )
    receiver = serving(config).start()
    try:
        resp = requests.post(
            receiver.http_address + "/v1/traces", data=hostile_request(), timeout=30,
            headers={"Content-Type": "application/x-protobuf", "Authorization": "Bearer agent-ingest"},
        )  # fmt: skip
        assert resp.status_code == 200, resp.text
        yield Live(receiver, receiver.http_address, db)
    finally:
        receiver.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped on purpose: Playwright's sync API keeps an event loop running on the main thread while it is
    open, so a session-wide browser makes every later test's ``asyncio.run`` fail."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("console_screenshots")


def save_shot(page: Any, shots: Path, name: str) -> Path:
    """A full-page PNG under the session's tmp dir (and $CONSOLE_SHOTS, for looking at them by hand)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80]
    path = shots / f"{safe}.png"
    page.screenshot(path=str(path), full_page=True)
    extra = os.environ.get("CONSOLE_SHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(extra) / path.name)
    return path


@pytest.fixture
def page_as(browser: Any, live: Live) -> Iterator[Any]:
    """A new browser context signed in through the sign-in form with the given token (fresh cookies each)."""
    contexts: list[Any] = []

    def open_as(token: str | None, width: int = 1440) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()
        page.dialogs = []  # type: ignore[attr-defined]
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
        page.errors = []  # type: ignore[attr-defined]
        page.on("pageerror", lambda e: page.errors.append(str(e)))  # type: ignore[attr-defined]
        if token:
            page.goto(live.url + "/signin")
            page.fill("input[name=token]", token)
            page.click("button[type=submit]")
            page.wait_for_url(live.url + "/")
        return page

    yield open_as
    for ctx in contexts:
        ctx.close()


@contextlib.contextmanager
def own_receiver(root: Path, db_name: str, *bodies: bytes) -> Iterator[str]:
    """A receiver of its own (no tokens, loopback, decoding in process) that has stored ``bodies`` (OTLP/HTTP
    trace requests); yields its HTTP address and stops it after."""
    config = ReceiverConfig.resolve(
        db=str(root / db_name), grpc_endpoint="127.0.0.1:0", http_endpoint="127.0.0.1:0", decode_workers=0
    )
    receiver = serving(config).start()
    try:
        for body in bodies:
            assert post_traces(receiver.http_address, body, timeout=60).status_code == 200
        yield receiver.http_address
    finally:
        receiver.stop()
