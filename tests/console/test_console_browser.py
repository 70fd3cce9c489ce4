"""The console in headless Chromium on the demo store served by a live receiver: every page, the run tree,
node details, the handoff link both ways, a claim approved in the page, hostile telemetry shown as text."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.console.conftest import XSS_ATTR, XSS_EVENT, XSS_NAME, XSS_SPAN, XSS_TRACE, Live, save_shot
from tests.otlp_builders import T0

RUN = "run_demo_deep_research"
WORKER_RUN = "run_demo_fact_check"
CLAIM = "claim_demo_draft_share"


def pages(live: Live) -> list[tuple[str, str, str]]:
    """(name, path, text the page must show)."""
    trace = live.rows("SELECT trace_id FROM runs WHERE run_id = ?", [RUN])[0][0]
    proposal = live.rows("SELECT proposal_id FROM memory_proposals")[0][0]
    return [
        ("runs", "/", "deep_research"),
        ("run", f"/runs/{RUN}", "Handoffs to other traces"),
        ("trace", f"/traces/{trace}", "deep_research"),
        ("claims", "/claims", "40% of agent teams use graph-based orchestration."),
        ("claim", f"/claims/{CLAIM}", "State of agents survey 2025"),
        ("artifacts", "/artifacts", "Agent orchestration frameworks"),
        ("artifact", "/artifacts/art_demo_report", "Diff v1 → v2"),
        ("receipts", "/receipts", "op_demo_fact_check"),
        ("providers", "/providers", "claude-sonnet-4-5"),
        ("proxy", "/providers", "deep-research-agent"),  # the LLM proxy's client (proxy_health)
        ("context", "/context", "171 → 96"),
        ("memory", "/memory", "report ranges"),
        ("memory_proposal", f"/memory/{proposal}", "Rationale"),
        ("sql", "/sql?q=" + quote("SELECT run_id, status FROM runs ORDER BY run_id"), RUN),
    ]


def test_every_page_renders(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    for name, path, text in pages(live):
        resp = page.goto(live.url + path)
        assert resp.status == 200, (path, resp.status)
        main = page.inner_text("main")
        assert text in main, (path, text)
        assert "datetime.datetime(" not in main, path
        assert "{'" not in main, path  # no Python reprs leak into a page
        assert "Internal error" not in page.title()
        assert save_shot(page, shots, f"demo_{name}").stat().st_size > 10_000
    assert page.errors == []
    assert page.dialogs == []


def test_runs_page_fits_1440(page_as: Any, live: Live) -> None:
    page = page_as("bob-query", width=1440)
    page.goto(live.url + "/")
    scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, (scroll, client)
    inner = page.eval_on_selector("section.panel.flush", "e => [e.scrollWidth, e.clientWidth]")
    assert inner[0] <= inner[1], inner  # nor inside the table's panel
    # numbers are right-aligned in tabular figures
    align = page.eval_on_selector("table.runs tbody td.num", "e => getComputedStyle(e).textAlign")
    assert align == "right"
    # "unpriced" is never shown as 0: the hostile run has a call with an unknown model
    row = page.locator("table.runs tbody tr", has_text="0badc0de")
    assert "unpriced" in row.inner_text()


def test_tree_expand_select_and_handoff_both_ways(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + f"/runs/{RUN}")
    # below the first levels a node is closed on load unless a problem is below it (test_console_explorer.py)
    key = page.evaluate(
        "[...document.querySelectorAll('tr.node:not(.hidden)')]"
        ".find(r => r.dataset.open === '0' && r.querySelector('.toggle:not(.leaf)')).dataset.key"
    )
    skill = page.locator(f'tr.node[data-key="{key}"]')
    children = page.locator(f'tr.node[data-parent="{key}"]')
    assert children.count() > 0
    assert all(not children.nth(i).is_visible() for i in range(children.count()))
    skill.locator("button.toggle").click()
    assert all(children.nth(i).is_visible() for i in range(children.count()))
    call = page.locator("tr.node", has_text="anthropic/claude-sonnet-4-5").first
    call.locator("span.title").click()
    details = page.locator("#details .span-details")
    details.wait_for()
    assert "Tokens" in details.inner_text()
    assert "Cost" in details.inner_text()
    assert "span=" in page.url  # the selection is bookmarkable
    save_shot(page, shots, "run_selected_call")
    # the guard block and the fallback are marked in the tree
    assert page.locator("tr.node .mark.fallback").count() >= 1
    # to the worker's run in one click, and back
    page.locator("#handoffs a.handoff-link").first.click()
    page.wait_for_url(f"**/runs/{WORKER_RUN}**")
    assert "fact_check" in page.locator("h1").inner_text()
    assert page.locator("tr.node.selected").count() == 1  # the linked span is selected
    page.locator("#handoffs a.handoff-link").first.click()
    page.wait_for_url(f"**/runs/{RUN}**")
    assert "deep_research" in page.locator("h1").inner_text()
    assert page.errors == []


def test_approve_claim_records_the_principal(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("alice-review")
    page.goto(live.url + f"/claims/{CLAIM}")
    form = page.locator("form.review").first
    form.locator("input[name=reason]").fill("checked both surveys <b>by hand</b>")
    form.locator("button[value=approve]").click()
    page.wait_for_url("**reviewed=rev_**")
    assert "recorded" in page.locator(".notice").inner_text()
    rows = live.rows(
        "SELECT decision, reviewer, principal, reason, target_snapshot->>'claim_id' FROM reviews "
        "WHERE target_kind = 'claim' AND target_id = ?",
        [CLAIM],
    )
    assert rows == [("approve", "alice", "alice", "checked both surveys <b>by hand</b>", CLAIM)]
    history = page.locator("table.reviews").inner_text()
    assert "alice" in history
    assert "checked both surveys <b>by hand</b>" in history
    save_shot(page, shots, "claim_after_approve")


_T0 = dt.datetime.fromtimestamp(T0 / 1e9, dt.UTC).replace(tzinfo=None)
HOSTILE_HOUR = (f"/providers?from={(_T0 - dt.timedelta(minutes=30)).isoformat(timespec='seconds')}"
                f"&to={(_T0 + dt.timedelta(minutes=30)).isoformat(timespec='seconds')}")  # fmt: skip
"""The hostile span's hour: the page's windowed path (health_scope.sql) over it."""


def test_providers_default_range_is_the_last_day(page_as: Any, live: Live) -> None:
    """Without a range the page shows (and says) the last 24 hours, so the old hostile span is not counted; its
    hour, or all time, shows it."""
    page = page_as("bob-query")
    page.goto(live.url + "/providers")
    main = page.inner_text("main")
    assert "last 24 hours" in main
    assert XSS_ATTR not in main
    for path in (HOSTILE_HOUR, "/providers?range=all"):
        page.goto(live.url + path)
        assert XSS_ATTR in page.inner_text("main"), path
    page.goto(live.url + HOSTILE_HOUR)
    assert "claude-sonnet-4-5" not in page.inner_text("main")  # the demo's recent calls are outside that hour


def test_hostile_telemetry_renders_as_text(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    trace = XSS_TRACE.hex()
    for path in ("/", f"/runs/{trace}", f"/traces/{trace}", f"/traces/{trace}?span={XSS_SPAN.hex()}",
                 f"/runs/{trace}?span={trace}:{XSS_SPAN.hex()}", "/providers?range=all", HOSTILE_HOUR):  # fmt: skip
        page.goto(live.url + path)
        text = page.inner_text("body")
        assert XSS_NAME in text or XSS_ATTR in text, path
        assert page.evaluate("typeof window.__xss") == "undefined", path
        assert page.locator("img[src=x]").count() == 0, path
        assert page.locator("svg[onload]").count() == 0, path
        assert page.evaluate("document.scripts.length") == 1, path  # ours only
        save_shot(page, shots, "xss_" + path)
    page.goto(live.url + f"/traces/{trace}?span={XSS_SPAN.hex()}")
    details = page.inner_text("#details")
    assert XSS_ATTR in details
    assert XSS_EVENT in details
    assert XSS_NAME in details
    # select the node through the script path too (fragment fetched and inserted)
    page.goto(live.url + f"/traces/{trace}")
    page.locator("tr.node span.title").first.click()
    page.locator("#details .span-details").wait_for()
    assert XSS_EVENT in page.inner_text("#details")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.dialogs == []
    assert page.errors == []


@pytest.mark.parametrize("token", [None])
def test_signed_out_browser_gets_the_sign_in_form(page_as: Any, live: Live, token: str | None) -> None:
    page = page_as(token)
    resp = page.goto(live.url + f"/runs/{RUN}")
    assert resp.status == 401
    assert page.locator("input[name=token]").count() == 1
    page.fill("input[name=token]", "agent-ingest")  # a token without the query role
    page.click("button[type=submit]")
    assert "lacks the 'query' role" in page.inner_text("main")
