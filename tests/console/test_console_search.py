"""The Search page in headless Chromium over the live demo store: spans across runs and runs by attribute, time
range presets, a bookmarkable URL, its JSON twin, hostile and malformed queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import requests

from tests.console.conftest import XSS_ATTR, XSS_TRACE, Live, save_shot

AUTH = {"Authorization": "Bearer bob-query"}


def test_spans_by_attribute_with_presets_and_a_bookmarkable_url(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + "/")
    page.click("nav a[href='/search']")
    page.fill("#q", "gen_ai.request.model ~ GPT")  # any case
    page.click("button.primary")
    page.wait_for_url("**/search?**")
    args = parse_qs(urlparse(page.url).query)
    assert args["q"] == ["gen_ai.request.model ~ GPT"]
    assert args["scope"] == ["spans"]
    assert args["range"] == ["24h"]
    rows = page.locator("table.results-spans tbody tr")
    names = rows.locator("td:first-child a").all_inner_texts()
    assert names
    assert all("gpt" in n.lower() for n in names), names
    expected = live.rows(
        "SELECT count(DISTINCT (trace_id, span_id)) FROM spans "
        "WHERE contains(lower(attributes->>'$.\"gen_ai.request.model\"'), 'gpt') "
        "AND start_time >= now()::TIMESTAMP - INTERVAL 24 HOUR"
    )[0][0]
    assert rows.count() == expected
    save_shot(page, shots, "search_spans")
    # the link opens the span in its trace
    first = rows.first.locator("td:first-child a")
    href = first.get_attribute("href")
    first.click()
    page.wait_for_url("**" + href)
    assert page.locator("tr.node.selected").count() == 1
    # the same URL again is the same search (bookmarkable)
    page.goto(live.url + f"/search?q={args['q'][0]}")
    assert page.locator("table.results-spans tbody tr").count() == expected
    # the hostile span is two years old: outside 7 days, found over all time
    q = "payload ~ onerror"
    page.goto(live.url + f"/search?q={q}&range=7d")
    assert "No span matches" in page.inner_text("main")
    page.locator("label.preset", has_text="all time").click()
    page.click("button.primary")
    page.wait_for_url("**range=all**")
    assert XSS_TRACE.hex()[:15] in page.inner_text("table.results-spans")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []


def test_runs_by_attributes_on_different_spans(page_as: Any, live: Live) -> None:
    page = page_as("bob-query")
    # a model used by one span and a blocked guard on another, both in the deep research run
    page.goto(
        live.url + "/search?scope=runs&range=all&q=gen_ai.request.model ~ gpt and otel_agent.guard.outcome = blocked"
    )
    runs = page.locator("table.results-runs tbody tr td:first-child a").all_inner_texts()
    assert runs == ["run_demo_deep_research"]
    page.goto(live.url + "/search?scope=runs&range=all&q=otel_agent.guard.outcome = nothing-like-this")
    assert "No run matches" in page.inner_text("main")
    # a run's status column word and a resource attribute
    page.goto(live.url + "/search?scope=runs&range=all&q=service = fact-check-worker")
    assert page.locator("table.results-runs tbody tr td:first-child a").all_inner_texts() == ["run_demo_fact_check"]
    assert page.errors == []


def test_hostile_and_malformed_queries(page_as: Any, live: Live) -> None:
    page = page_as("bob-query")
    resp = page.goto(live.url + "/search?range=all&q=" + requests.utils.quote(f"payload = {XSS_ATTR}"))
    assert resp.status == 200
    assert page.locator("img[src=x]").count() == 0
    assert page.input_value("#q") == f"payload = {XSS_ATTR}"
    assert page.locator("table.results-spans tbody tr").count() == 1
    for bad in ("= nothing", "a = ", " and ".join(["k"] * 9)):
        resp = page.goto(live.url + "/search?q=" + requests.utils.quote(bad))
        assert resp.status == 200, bad
        assert page.locator(".notice[role=alert]").count() == 1, bad
    # the JSON twin answers the same rows
    r = requests.get(live.url + "/search.json", params={"q": "gen_ai.request.model ~ gpt", "range": "all"},
                     headers=AUTH, timeout=30)  # fmt: skip
    assert r.status_code == 200
    data = r.json()["data"]
    assert data["terms"] == ["gen_ai.request.model ~ gpt"]
    assert data["rows"]
    assert all("gpt" in row["span_name"].lower() or row["span_name"] for row in data["rows"])
    assert page.errors == []
