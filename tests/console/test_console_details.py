"""The console's smaller items in headless Chromium: the SQL page keeps the editor on an error and has a schema
browser, the artifact diff is word-level and single-spaced, a review notice says what was recorded, chart labels
are inside their charts."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.console.conftest import Live


def test_sql_error_keeps_the_editor_and_the_schema_browser_opens_a_view(page_as: Any, live: Live) -> None:
    page = page_as("bob-query")
    bad = "SELECT no_such_column FROM runs"
    resp = page.goto(live.url + "/sql?q=" + quote(bad))
    assert resp.status == 400
    assert page.input_value("textarea#sql") == bad
    assert "no_such_column" in page.inner_text(".sql-error")
    views = page.locator("aside.schema div.view > a").all_inner_texts()
    assert "runs" in views
    assert "spans" in views
    assert "claim_support" in views
    runs = page.locator("aside.schema div.view", has=page.locator("a", has_text="runs")).first
    runs.locator("summary").click()
    assert "run_id" in runs.locator("details").inner_text()
    page.locator("aside.schema div.view > a", has_text="provider_calls").click()
    page.wait_for_url("**/sql?q=SELECT**")
    assert page.locator("table.results tbody tr").count() > 0
    assert page.errors == []


def test_diff_is_word_level_and_single_spaced(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + "/artifacts/art_demo_report")
    inserted = page.locator("pre.diff ins").all_inner_texts()
    assert any("Between 25%" in t for t in inserted), inserted
    assert page.locator("pre.diff del").count() >= 0
    lines = page.locator("pre.diff span.line")
    boxes = [lines.nth(i).bounding_box() for i in range(min(lines.count(), 6))]
    steps = [b2["y"] - b1["y"] for b1, b2 in itertools.pairwise(boxes)]
    height = boxes[0]["height"]
    assert all(abs(s - height) < 1.5 for s in steps), (steps, height)  # one line after another, no blank between
    page.locator("pre.diff").screenshot(path=str(shots / "diff.png"))
    assert page.errors == []


def test_review_notice_says_what_was_recorded(page_as: Any, live: Live) -> None:
    page = page_as("alice-review")
    page.goto(live.url + "/claims/claim_demo_draft_share")
    form = page.locator("#ev-ev_demo_survey_a form.review")
    form.locator("input[name=reason]").fill("excerpt checked <i>twice</i>")
    form.locator("button[value=annotate]").click()
    page.wait_for_url("**reviewed=rev_**")
    notice = page.inner_text(".notice.ok")
    assert "Annotated evidence item ev_demo_survey_a" in notice, notice
    assert "“excerpt checked <i>twice</i>”" in notice
    assert "recorded as alice" in notice
    assert page.errors == []


def test_chart_labels_are_inside_their_charts(page_as: Any, live: Live) -> None:
    page = page_as("bob-query")
    for path in ("/", "/context"):
        page.goto(live.url + path)
        outside = page.evaluate(
            """() => [...document.querySelectorAll('svg.svgchart')].flatMap(svg => {
                 const vb = svg.viewBox.baseVal;
                 return [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBBox()])
                   .filter(([, b]) => b.x < vb.x - 0.5 || b.x + b.width > vb.x + vb.width + 0.5)
                   .map(([s]) => s);
               })"""
        )
        assert outside == [], (path, outside)
    assert page.errors == []
