"""``otel-agent ui`` as a real process over closed stores: the demo store and a store of third-party spans
(OpenInference's instrumentation of the OpenAI Agents SDK, driven offline against a fake OpenAI server), given
as two shards and read as one; read-only (review actions hidden, with the reason; a POST is refused)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import serve_ui
from tests.console.conftest import save_shot
from tests.tools import needs_module


@pytest.fixture(scope="session")
def third_party_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs_module("agents")
    from agents import set_trace_processors
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    from tests.derived_runs.fake_openai import FakeOpenAI
    from tests.derived_runs.runs_support import write_store
    from tests.derived_runs.test_runs_third_party import capture, run_agents

    spans: list[Any] = []

    def produce() -> None:  # in its own thread: Playwright's sync API keeps an event loop on this one
        with FakeOpenAI() as server:
            spans.extend(capture(OpenAIAgentsInstrumentor(), lambda _: run_agents(server.base_url)))

    set_trace_processors([])  # the Agents SDK would export its own traces to OpenAI otherwise
    try:
        worker = threading.Thread(target=produce)
        worker.start()
        worker.join(timeout=120)
    finally:
        set_trace_processors([])
    assert len(spans) >= 10
    return write_store(tmp_path_factory.mktemp("console_third_party") / "oi.duckdb", spans)


@pytest.fixture(scope="session")
def ui_url(otlp_demo: Any, third_party_db: Path) -> Iterator[str]:
    with serve_ui("--db", otlp_demo.db, "--db", str(third_party_db)) as url:
        yield url


def test_ui_over_shards_every_page(browser: Any, ui_url: str, third_party_db: Path, shots: Path) -> None:
    import duckdb

    con = duckdb.connect(str(third_party_db), read_only=True)
    (trace,) = con.execute("SELECT trace_id FROM runs").fetchone()
    con.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(ui_url + "/")
    runs = page.inner_text("table.runs")
    assert "Agent workflow" in runs
    assert "deep_research" in runs
    save_shot(page, shots, "ui_runs_shards")
    page.goto(ui_url + f"/runs/{trace}")
    tree = page.text_content("#tree") or ""  # collapsed rows included
    for name in ("Agent workflow", "triage_agent", "weather_agent", "openai/gpt-4o", "get_weather"):
        assert name in tree, name
    assert page.locator("tr.node .kind.k-handoff").count() == 1
    tool = page.locator("tr.node", has_text="get_weather").first
    for _ in range(10):  # expand the tree down to the tool
        if tool.is_visible():
            break
        page.locator('tr.node:not(.hidden)[data-open="0"] button.toggle:not(.leaf)').first.click()
    tool.locator("span.title").click()
    page.locator("#details .span-details").wait_for()
    assert "tool_invocation" in page.inner_text("#details")
    save_shot(page, shots, "ui_third_party_run")
    page.goto(ui_url + f"/traces/{trace}")
    assert page.locator("tr.node").count() >= 12
    save_shot(page, shots, "ui_third_party_trace")
    for path in ("/providers", "/claims", "/artifacts", "/receipts", "/context", "/memory", "/sql?q=SELECT+1"):
        assert page.goto(ui_url + path).status == 200, path
    page.goto(ui_url + "/providers")
    assert "gpt-4o" in page.inner_text("main")
    page.goto(ui_url + "/claims/claim_demo_draft_share")
    assert page.locator("form.review").count() == 0
    assert "otel-agent ui opens closed files read-only" in page.inner_text("main")
    assert errors == []
    ctx.close()


def test_ui_refuses_review_posts(ui_url: str) -> None:
    s = requests.Session()
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', s.get(ui_url + "/signin", timeout=30).text).group(1)
    resp = s.post(ui_url + "/claims/claim_demo_draft_share/review", timeout=30, allow_redirects=False,
                  data={"csrf": csrf, "target_kind": "claim", "target_id": "claim_demo_draft_share",
                        "decision": "approve"})  # fmt: skip
    assert resp.status_code == 403
    assert "read-only" in resp.text
    assert s.post(ui_url + "/claims/claim_demo_draft_share/review", timeout=30, data={}).status_code == 403
