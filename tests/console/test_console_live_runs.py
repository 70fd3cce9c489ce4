"""Issue 36: the open runs page updates itself (docs/console.md "Live pages", console.js "Live pages"), and runs and
handoffs that are the key of a firing alert are marked (docs/alerts.md "On the console"). One real receiver with
real alert rules evaluated every second, runs and handoffs sent through OTLP by our instrumentation, one headless
Chromium: the page is never navigated while rows appear and change."""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_agent.instrument as oi
from otel_agent.console.pages import runs as runs_page
from otel_agent.server.receiver import Receiver
from tests.conftest import start_receiver, wait_until
from tests.console.conftest import save_shot

XSS_RUN = "run_<script>window.__xss=1</script>"
RULES = """
[[rule]]
name = "run_watch"
kind = "sql"
severity = "critical"
query = "SELECT run_id AS key, 'run ' || run_id || ' is watched' AS summary FROM runs WHERE workflow_name = 'watched'"

[[rule]]
name = "handoff_orphaned"
kind = "receipt"
state = "orphaned"
window = "1s"
"""
WAIT_S = 30.0  # a bound, not a delay: each wait ends as soon as the page shows the state


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    root = tmp_path_factory.mktemp("console_live")
    rules = root / "rules.toml"
    rules.write_text(RULES)
    receiver = start_receiver(root / "live.duckdb", alert_rules=str(rules), alert_interval_s=1)
    try:
        yield receiver
    finally:
        receiver.stop()


@pytest.fixture(scope="module")
def provider(receiver: Receiver) -> Iterator[TracerProvider]:
    """Spans exported as each ends (and each run's start announced at once) over OTLP/HTTP."""
    p = TracerProvider(resource=Resource.create({"service.name": "live-test"}))
    p.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.http_address}/v1/traces")))
    yield p
    p.shutdown()


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages ask for their live part every second (5 s in use): the waits below stay short."""
    monkeypatch.setattr(runs_page, "LIVE_SECONDS", 1)


def a_run(provider: TracerProvider, run_id: str, workflow: str = "fresh") -> None:
    with oi.flow_run(workflow, run_id=run_id, tracer_provider=provider), oi.step("only"):
        pass


def row(page: Any, run_id: str) -> Any:
    return page.locator(f'#runs-live tr[data-run-id="{run_id}"]')


def status_of(page: Any, run_id: str) -> str | None:
    return page.evaluate(
        "id => { const r = [...document.querySelectorAll('#runs-live tr[data-run-id]')]"
        ".find(tr => tr.dataset.runId === id); return r ? r.dataset.status : null; }",
        run_id,
    )


def open_runs(browser: Any, url: str, width: int = 1440) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "fragment=live" in r.url else None)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.evaluate("window.__same_page = 'yes'")  # gone if anything navigates
    page.errors = errors  # type: ignore[attr-defined]
    return ctx, page, fetched


def test_the_open_runs_page_shows_new_and_ending_runs_and_pauses(
    receiver: Receiver, provider: TracerProvider, browser: Any, fast: None, shots: Path
) -> None:
    url = receiver.http_address
    a_run(provider, "run_before")
    wait_until(lambda: "run_before" in requests.get(url + "/", timeout=30).text, "the first run listed")
    ctx, page, fetched = open_runs(browser, url + "/?q=run_&sort=start")
    try:
        assert page.locator("[data-live-bar=runs]").is_visible()
        assert row(page, "run_before").count() == 1

        # a new run appears at the top, in the open page
        a_run(provider, "run_new")
        page.wait_for_function(
            "() => document.querySelector('#runs-live tbody tr').dataset.runId === 'run_new'", timeout=WAIT_S * 1000
        )
        assert re.fullmatch(r"live · updated \d\d:\d\d:\d\d UTC", page.locator(".live-label").inner_text())
        # the filters and sort of the URL are the page's: a run the filter excludes never shows
        a_run(provider, "other_run")
        wait_until(lambda: "other_run" in requests.get(url + "/", timeout=30).text, "other_run stored")
        for _ in range(2):  # two more updates, after the run was stored
            page.wait_for_event("requestfinished", lambda r: "fragment=live" in r.url, timeout=WAIT_S * 1000)
        assert all("q=run_" in f and "sort=start" in f for f in fetched)
        assert row(page, "other_run").count() == 0

        # a running run shows running (with its step), then its end, without a navigation
        def long_run() -> None:
            with oi.flow_run("long", run_id="run_long", tracer_provider=provider), oi.step("research"):
                page.wait_for_function(
                    "() => [...document.querySelectorAll('#runs-live tr[data-run-id]')]"
                    ".some(tr => tr.dataset.runId === 'run_long' && tr.dataset.status === 'running')",
                    timeout=WAIT_S * 1000,
                )
                assert "research" in row(page, "run_long").locator(".live-step").inner_text()
                save_shot(page, shots, "live_runs_running")

        contextvars.Context().run(long_run)  # a context of its own: nothing left current if it fails
        page.wait_for_function(
            "() => [...document.querySelectorAll('#runs-live tr[data-run-id]')]"
            ".some(tr => tr.dataset.runId === 'run_long' && tr.dataset.status === 'ok')",
            timeout=WAIT_S * 1000,
        )
        assert row(page, "run_long").locator(".live-step").count() == 0

        # paused: no request, no change, however long; resumed: the run is there
        page.click(".live-pause")
        assert page.locator(".live-pause").get_attribute("aria-pressed") == "true"
        assert page.locator(".live-label").inner_text() == "paused"
        a_run(provider, "run_while_paused")
        wait_until(
            lambda: "run_while_paused" in requests.get(url + "/?q=run_&fragment=live", timeout=30).text,
            "the server lists the run",
        )
        n = len(fetched)
        page.wait_for_timeout(3000)  # three update intervals: the one place a test waits for nothing to happen
        assert len(fetched) == n
        assert row(page, "run_while_paused").count() == 0
        page.click(".live-pause")
        row(page, "run_while_paused").wait_for(timeout=WAIT_S * 1000)
        assert page.evaluate("window.__same_page") == "yes"
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        ctx.close()


def test_the_live_part_is_the_page_s_own_rows(receiver: Receiver, provider: TracerProvider) -> None:
    """The fragment is the same template's part of the page: the same rows, links without ``fragment``; without
    JavaScript the page is whole and its live bar hidden."""
    a_run(provider, "run_fragment")
    url = receiver.http_address
    wait_until(lambda: "run_fragment" in requests.get(url + "/", timeout=30).text, "the run listed")
    whole = requests.get(url + "/?sort=cost&dir=asc", timeout=30).text
    part = requests.get(url + "/?sort=cost&dir=asc&fragment=live", timeout=30)
    assert part.status_code == 200
    assert "script-src 'self'" in part.headers["content-security-policy"]
    assert "<html" not in part.text
    assert 'id="runs-live"' in part.text
    rows = re.findall(r'<tr data-run-id="([^"]+)"', part.text)
    assert rows
    assert rows == re.findall(r'<tr data-run-id="([^"]+)"', whole)
    assert "fragment=" not in " ".join(re.findall(r'href="([^"]*)"', part.text))
    assert re.search(r'<span class="live-bar" data-live-bar="runs" hidden>', whole)
    # a running run's page asks for its own row by id (?run=): exactly that run, where ?q= matches a substring
    a_run(provider, "run_fragment_2")
    wait_until(lambda: "run_fragment_2" in requests.get(url + "/", timeout=30).text, "the second run listed")
    by_text = re.findall(r'<tr data-run-id="([^"]+)"', requests.get(url + "/?q=run_fragment", timeout=30).text)
    assert {"run_fragment", "run_fragment_2"} <= set(by_text)
    by_id = requests.get(url + "/?run=run_fragment&fragment=live", timeout=30).text
    assert re.findall(r'<tr data-run-id="([^"]+)"', by_id) == ["run_fragment"]


def test_firing_alerts_mark_their_runs_and_handoffs_only(
    receiver: Receiver, provider: TracerProvider, browser: Any, fast: None, shots: Path
) -> None:
    url = receiver.http_address
    ctx, page, _ = open_runs(browser, url + "/")
    try:
        a_run(provider, "run_watched", "watched")
        a_run(provider, XSS_RUN, "watched")
        a_run(provider, "run_quiet", "unwatched")
        with oi.use_tracer_provider(provider):
            oi.delegate("report", operation_id="op_orphan")  # delegated, never accepted: orphaned after 1 s
            op = oi.delegate("report", operation_id="op_fine")
            with oi.accept(op.carrier, expected_artifact="report") as work:
                work.completed(artifact_ref="artv_1")
            op.verified("checked")
        # the evaluator (every second) fires; the open page shows the marks at its next update
        page.wait_for_function("() => document.querySelectorAll('#runs-live .alert-mark').length === 2",
                               timeout=WAIT_S * 1000)  # fmt: skip
        marked = page.evaluate(
            "() => [...document.querySelectorAll('#runs-live tr')].filter(tr => tr.querySelector('.alert-mark'))"
            ".map(tr => tr.dataset.runId).sort()"
        )
        assert marked == sorted(["run_watched", XSS_RUN])
        mark = row(page, XSS_RUN).locator(".alert-mark")
        assert mark.get_attribute("title") == "alert firing: run_watch"
        assert mark.get_attribute("aria-label") == "alert firing: run_watch"
        assert "critical" in (mark.get_attribute("class") or "")
        assert row(page, XSS_RUN).locator(".sub.mono").get_attribute("title") == XSS_RUN  # text, never markup
        assert XSS_RUN[:30] in row(page, XSS_RUN).inner_text()
        assert page.evaluate("window.__xss") is None
        save_shot(page, shots, "live_runs_marked")

        mark.click()
        page.wait_for_url(re.compile(r"/alerts\?key="))
        firing = page.locator("#firing tbody tr.alert-firing")
        assert firing.count() == 1
        assert "run_watch" in firing.inner_text()
        assert XSS_RUN[:20] in firing.inner_text()
        assert page.evaluate("window.__xss") is None

        page.goto(url + "/receipts")

        def receipt_marks() -> list[str]:
            page.reload()
            return page.evaluate(
                "() => [...document.querySelectorAll('tr[data-operation-id]')]"
                ".filter(tr => tr.querySelector('.alert-mark')).map(tr => tr.dataset.operationId)"
            )

        assert wait_until(receipt_marks, "the orphaned handoff marked", timeout_s=WAIT_S, every_s=0.5) == ["op_orphan"]
        assert page.locator('tr[data-operation-id="op_fine"]').count() == 1  # listed, not marked
        link = page.locator('tr[data-operation-id="op_orphan"] .alert-mark')
        assert link.get_attribute("title") == "alert firing: handoff_orphaned"
        assert link.get_attribute("href") == "/alerts?key=op_orphan"
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        ctx.close()
    assert axe_violations(browser, [url + "/", url + "/receipts"]) == {}


def axe_violations(browser: Any, urls: list[str]) -> dict[str, list[str]]:
    """axe-core's WCAG 2 A / AA rules (tests/console/test_console_explorer.py) on pages with the badges and the
    live bar, in both colour schemes."""
    from tests.console.test_console_explorer import AXE, AXE_RUN

    source = AXE.read_text(encoding="utf-8")
    found = {}
    for scheme in ("light", "dark"):
        ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme, bypass_csp=True)
        try:
            page = ctx.new_page()
            for url in urls:
                page.goto(url)
                page.add_script_tag(content=source)
                violations = page.evaluate(AXE_RUN)
                if violations:
                    found[f"{scheme} {url}"] = violations
        finally:
            ctx.close()
    return found


def test_a_running_run_s_page_follows_the_run_until_it_ends(
    receiver: Receiver, provider: TracerProvider, browser: Any, shots: Path
) -> None:
    """Its summary is swapped in place; its tree, which keeps state in the page, by a reload while untouched —
    once the user has used the tree, never under them: "show new spans" instead."""
    url = receiver.http_address
    runs = []

    def first_step() -> None:
        with oi.step("first"):
            pass

    for run_id in ("run_page_idle", "run_page_used"):
        # each run open in a context of its own: not nested in the other, and nothing of it left current in this
        # process when the test ends (a run left current would own every span later tests on this worker make)
        context = contextvars.Context()
        run = oi.flow_run("page", run_id=run_id, tracer_provider=provider)
        context.run(run.__enter__)
        context.run(first_step)
        runs.append((context, run))
    wait_until(lambda: "running" in requests.get(url + "/runs/run_page_used", timeout=30).text, "runs running")
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        idle, used = ctx.new_page(), ctx.new_page()
        for page, run_id in ((idle, "run_page_idle"), (used, "run_page_used")):
            page.goto(f"{url}/runs/{run_id}")
            assert page.locator(".live-root").get_attribute("data-live") == "running"
            assert page.locator(".live-bar .live-label").is_visible()
        used.evaluate("window.__same_page = 'yes'")
        used.locator("#split button.toggle").first.click()  # the user is using the tree (no navigation)
        for context, run in runs:
            context.run(run.__exit__, None, None, None)
        idle.wait_for_function("() => document.querySelector('.live-root').dataset.live === 'ok'",
                               timeout=WAIT_S * 1000)  # fmt: skip
        assert idle.locator(".live-bar").count() == 0  # reloaded as ended: no longer live
        used.wait_for_function("() => document.querySelector('.pagehead h1 .pill').textContent === 'ok'",
                               timeout=WAIT_S * 1000)  # fmt: skip
        assert used.evaluate("window.__same_page") == "yes"
        assert used.locator(".live-show").is_visible()
        assert used.locator(".live-label").inner_text() == "run ended: ok"
        save_shot(used, shots, "live_run_ended")
    finally:
        ctx.close()
