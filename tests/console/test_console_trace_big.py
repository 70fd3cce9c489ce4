"""Issue 35, the trace and run pages' last items, in headless Chromium over a receiver of this module's own:

- a trace past ``tree.WHOLE_TREE`` spans is sent in part (the first levels, the way to its problems; the rest as
  closed nodes and gap rows fetched on demand, or read as pages of their own without JavaScript), and
  find-in-trace still finds a span that was not sent;
- a span in progress (a Logfire pending span announced it, it has not ended) is an open bar to the run's last
  activity, marked running, in the run page, the trace page and the minimap;
- every column heading of the agents graph is whole inside its SVG at 1440 and 390 px.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from otel_agent.console import tree
from tests.console.conftest import own_receiver, save_shot
from tests.otlp_builders import T0, span_request

BIG_TRACE = bytes.fromhex("b16b1900" * 4)
BIG = 2_400  # past tree.WHOLE_TREE: sent in part
WORKERS = 40
ERROR_AT = 2_000  # under worker 2 + ERROR_AT % WORKERS
NEEDLE_AT = 1_777  # a span whose worker is closed on load: find-in-trace must ask the server
NEEDLE = "haystack-needle-<b>"
RUN_TRACE = bytes.fromhex("5eed0001" * 4)  # a third party's run: its run id is its trace id
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o"}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
PENDING = {"logfire.span_type": "pending_span"}


def sid(n: int) -> bytes:
    return n.to_bytes(8, "big")


def _big_request() -> bytes:
    spans = [
        {
            "trace_id": BIG_TRACE,
            "span_id": sid(1),
            "name": "big root",
            "start": T0,
            "end": T0 + BIG * 1_000_000,
            "attributes": AGENT,
        }
    ]  # an agent's run: the run page draws it too
    for i in range(2, BIG + 1):
        parent = 1 if i <= WORKERS + 1 else 2 + (i % WORKERS)
        start = T0 + i * 400_000
        attrs: dict[str, Any] = {"worker.index": i}
        if i == ERROR_AT:
            attrs["error.type"] = "boom"
        if i == NEEDLE_AT:
            attrs["needle.text"] = NEEDLE
        spans.append({"trace_id": BIG_TRACE, "span_id": sid(i), "parent_span_id": sid(parent),
                      "name": f"work {i}", "start": start, "end": start + 200_000, "attributes": attrs})  # fmt: skip
    req = span_request(spans, service="big-svc")
    req.resource_spans[0].scope_spans[0].spans[ERROR_AT - 1].status.code = 2
    return req.SerializeToString()


def _running_request() -> bytes:
    """A run whose agent span and one tool have started, not ended (announced by Logfire pending spans), and
    whose model call has ended: a few seconds ago, so the run is running."""
    t = time.time_ns() - 5_000_000_000
    pending_root = {**AGENT, **PENDING, "logfire.pending_parent_id": "0" * 16}
    pending_tool = {**TOOL, **PENDING, "logfire.pending_parent_id": sid(1).hex()}
    spans = [
        {"span_id": sid(91), "parent_span_id": sid(1), "name": "invoke_agent support", "start": t, "end": t,
         "attributes": pending_root},
        {"span_id": sid(2), "parent_span_id": sid(1), "name": "chat gpt-4o", "start": t + 100_000_000,
         "end": t + 900_000_000, "attributes": {**CHAT, "gen_ai.usage.input_tokens": 10}},
        {"span_id": sid(92), "parent_span_id": sid(3), "name": "execute_tool search", "start": t + 950_000_000,
         "end": t + 950_000_000, "attributes": pending_tool},
        {"span_id": sid(4), "parent_span_id": sid(1), "name": "chat gpt-4o", "start": t + 1_000_000_000,
         "end": t + 2_000_000_000, "attributes": CHAT},
    ]  # fmt: skip
    for s in spans:
        s["trace_id"] = RUN_TRACE
    return span_request(spans, service="running-svc").SerializeToString()


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("console_trace_big")
    with own_receiver(root, "big.duckdb", _big_request(), _running_request()) as url:
        yield url


@pytest.fixture
def page_at(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def open_page(width: int = 1440) -> Any:
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()
        page.errors = []  # type: ignore[attr-defined]
        page.on("pageerror", lambda e: page.errors.append(str(e)))  # type: ignore[attr-defined]
        return page

    yield open_page
    for ctx in contexts:
        ctx.close()


def key(n: int, trace: bytes = BIG_TRACE) -> str:
    return f"{trace.hex()}:{sid(n).hex()}"


def worker_of(i: int) -> int:
    return 2 + (i % WORKERS)


def children_of(w: int) -> int:
    return sum(1 for i in range(WORKERS + 2, BIG + 1) if worker_of(i) == w)


def test_a_big_trace_is_sent_in_part_and_the_rest_is_fetched_when_opened(own: str, page_at: Any, shots: Path) -> None:
    url = f"{own}/traces/{BIG_TRACE.hex()}"
    html = requests.get(url, timeout=60).text
    page = page_at()
    page.goto(url)
    rows = page.locator("tr.node")
    sent = rows.count()
    # the root, its 40 workers, the failing span and its neighbours: not 2,400 rows
    assert WORKERS + 2 <= sent < 80
    assert page.locator("#tree").get_attribute("data-partial") is not None
    assert len(html) < 120_000
    # the problem is open on load, its worker open showing it between gap rows
    error_row = page.locator(f"tr.node[data-key='{key(ERROR_AT)}']")
    assert error_row.is_visible()
    assert "problem" in (error_row.get_attribute("class") or "")
    gaps = page.locator(f"tr.gap[data-parent='{key(worker_of(ERROR_AT))}']")
    assert gaps.count() == 2
    # a closed worker's children arrive when it is opened, in place and shown
    w = worker_of(NEEDLE_AT)
    worker = page.locator(f"tr.node[data-key='{key(w)}']")
    assert worker.get_attribute("data-lazy") == str(children_of(w))
    assert page.locator(f"tr[data-parent='{key(w)}']").count() == 0
    worker.locator(".toggle").click()
    page.locator(f"tr.node[data-parent='{key(w)}']").first.wait_for()
    kids = page.locator(f"tr.node[data-parent='{key(w)}']")
    assert kids.count() == children_of(w)
    assert all(kids.nth(i).is_visible() for i in (0, kids.count() - 1))
    assert worker.get_attribute("data-lazy") is None
    assert worker.locator(".toggle").get_attribute("aria-expanded") == "true"
    # the row after the worker is its first child (tree order kept)
    assert page.evaluate(
        f"document.querySelector(\"tr[data-key='{key(w)}']\").nextElementSibling.dataset.parent"
    ) == key(w)
    # closing it hides them again, without another fetch
    worker.locator(".toggle").click()
    assert not kids.first.is_visible()
    # a gap row: the spans it stands for take its place
    first_gap = gaps.first
    link = first_gap.locator("a.more-spans")
    count = int(re.search(r"(\d+) more", link.inner_text()).group(1))  # type: ignore[union-attr]
    before = page.locator(f"tr.node[data-parent='{key(worker_of(ERROR_AT))}']").count()
    link.click()
    for _ in range(200):
        if gaps.count() == 1:
            break
        time.sleep(0.02)
    assert gaps.count() == 1
    assert page.locator(f"tr.node[data-parent='{key(worker_of(ERROR_AT))}']").count() == before + count
    # the keyboard opens a closed node too
    other = page.locator(f"tr.node[data-key='{key(w + 1)}']")
    other.click()
    page.keyboard.press("ArrowRight")
    page.locator(f"tr.node[data-parent='{key(w + 1)}']").first.wait_for()
    assert page.locator(f"tr.node[data-parent='{key(w + 1)}']").count() == children_of(w + 1)
    assert page.errors == []


def test_find_in_trace_finds_a_span_that_was_not_sent(own: str, page_at: Any) -> None:
    page = page_at()
    page.goto(f"{own}/traces/{BIG_TRACE.hex()}")
    assert page.locator(f"tr[data-key='{key(NEEDLE_AT)}']").count() == 0
    page.fill("#find", "haystack-needle")
    page.press("#find", "Enter")
    page.wait_for_url("**find=**")
    found = page.locator(f"tr.node.found[data-key='{key(NEEDLE_AT)}']")
    assert found.is_visible()
    assert page.locator("#matches a.jump").count() == 1
    assert page.locator("#find-count").inner_text() == "1 match"
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []


def test_without_javascript_a_closed_subtree_is_a_page(own: str) -> None:
    html = requests.get(f"{own}/traces/{BIG_TRACE.hex()}", timeout=60).text
    w = worker_of(NEEDLE_AT)
    row = re.search(rf'<tr id="[^"]+" class="[^"]*" data-key="{key(w)}"[^>]*>.*?</tr>', html, re.S)
    assert row is not None
    href = re.search(r'<a class="more-spans" href="([^"]+)"', row.group(0)).group(1)  # type: ignore[union-attr]
    sub = requests.get(own + href.replace("&amp;", "&"), timeout=60)
    assert sub.status_code == 200
    assert sub.text.count(f'data-parent="{key(w)}"') == children_of(w)
    assert "big root" in sub.text  # the way back: the breadcrumb names the root
    assert f'class="kind k-other" href="/traces/{BIG_TRACE.hex()}?span=' in sub.text  # a span opens on the trace page
    # a gap's link: the spans it stands for
    gap = re.search(r'<tr class="gap" data-parent="([^"]+)"[^>]*>.*?href="([^"]+)".*?(\d+) more', html, re.S)
    assert gap is not None
    page = requests.get(own + gap.group(2).replace("&amp;", "&"), timeout=60).text
    assert page.count(f'data-parent="{gap.group(1)}"') >= int(gap.group(3))
    # the fragment the script asks for is rows only
    frag = requests.get(own + href.replace("&amp;", "&") + "&fragment=1", timeout=60).text
    assert "<html" not in frag
    assert frag.count('class="node') == children_of(w)
    # the run page (a third party's run: its id is its trace id) is sent in part the same way, its rows fetched
    # from its own URL
    run_html = requests.get(f"{own}/runs/{BIG_TRACE.hex()}", timeout=60).text
    assert "data-partial=" in run_html
    assert run_html.count('class="node') < 80
    escaped = key(w).replace(":", "%3A")
    run_href = re.search(rf'<a class="more-spans" href="(/runs/[^"]+parent={escaped}[^"]*)"', run_html)
    assert run_href is not None
    run_frag = requests.get(own + run_href.group(1).replace("&amp;", "&") + "&fragment=1", timeout=60).text
    assert run_frag.count(f'data-parent="{key(w)}"') == children_of(w)
    # hostile or unknown arguments: a 404 or the roots, never a 500
    assert requests.get(f"{own}/traces/{BIG_TRACE.hex()}/tree?parent=<x>", timeout=60).status_code == 404
    roots = requests.get(f"{own}/traces/{BIG_TRACE.hex()}/tree?parent=-&lo=-5&hi=99999999", timeout=60)
    assert roots.status_code == 200
    assert roots.text.count('class="node') == 1


def test_a_span_in_progress_is_an_open_bar_marked_running(own: str, page_at: Any, shots: Path) -> None:
    run = RUN_TRACE.hex()
    for width in (1440, 390):
        page = page_at(width)
        page.goto(f"{own}/runs/{run}")
        running = page.locator("tr.node.running")
        assert running.count() == 2  # the agent span and the tool, both announced and not ended
        for i in range(2):
            assert running.nth(i).locator(".mark.running").count() == 1
        # the minimap (shown at every width): the lines holding them are open bars, wider than a tick
        minimap = page.locator("#minimap").bounding_box()
        assert minimap is not None
        tick = minimap["width"] * 3 / tree.WIDTH  # what a 0 ms span draws
        lines = page.locator("svg.minimap rect.open")
        assert lines.count() == 2
        assert all((lines.nth(i).bounding_box() or {"width": 0})["width"] > 10 * tick for i in range(2))
        name = "run_running" if width == 1440 else "run_running_390"
        save_shot(page, shots, name)
        assert page.errors == []
    # the waterfall (1440 px; a phone shows the tree and the minimap)
    page = page_at(1440)
    for url in (f"{own}/runs/{run}", f"{own}/traces/{run}"):
        page.goto(url)
        running = page.locator("tr.node.running")
        assert running.count() == 2
        for i in range(2):
            row = running.nth(i)
            assert row.locator("td.num").inner_text().startswith("running")
            bar = row.locator("svg.wf rect.open").bounding_box()
            svg = row.locator("svg.wf").bounding_box()
            assert bar is not None
            assert svg is not None
            assert bar["width"] > 10 * svg["width"] * 3 / tree.WIDTH
            # open-ended: it reaches the last activity (the end of the last call: the waterfall's right end)
            assert abs((bar["x"] + bar["width"]) - (svg["x"] + svg["width"])) < 2
        # the agent span started first: its bar starts at the left
        agent = page.locator(f"tr.node.running[data-key='{key(1, RUN_TRACE)}'] svg.wf").bounding_box()
        agent_bar = page.locator(f"tr.node.running[data-key='{key(1, RUN_TRACE)}'] svg.wf rect.open").bounding_box()
        assert agent is not None
        assert agent_bar is not None
        assert agent_bar["x"] - agent["x"] < 2
        # drawn fading to its open end (a gradient), not as a solid bar
        assert page.evaluate("getComputedStyle(document.querySelector('svg.wf rect.open')).fill").startswith("url(")
        # an ended call keeps its duration
        assert page.locator(f"tr.node[data-key='{key(4, RUN_TRACE)}'] td.num").inner_text() == "1.00 s"
        assert page.errors == []


def test_the_agents_graph_headings_are_whole(own: str, page_at: Any) -> None:
    for width in (1440, 390):
        page = page_at(width)
        page.goto(f"{own}/runs/{RUN_TRACE.hex()}")
        svg = page.locator("#agents svg.graph")
        box = svg.bounding_box()
        heads = svg.locator("text.colhead")
        assert heads.count() == 3
        text = " ".join(heads.nth(i).text_content() or "" for i in range(3))
        assert "…" not in text
        assert "processes" in text.lower()
        boxes = [heads.nth(i).bounding_box() for i in range(3)]
        for i, b in enumerate(boxes):
            assert b is not None
            assert box is not None
            assert b["x"] >= box["x"] - 0.5
            assert b["x"] + b["width"] <= box["x"] + box["width"] + 0.5
            assert b["y"] >= box["y"] - 0.5
            if i + 1 < len(boxes):
                assert b["x"] + b["width"] < boxes[i + 1]["x"]  # not into the next column
        # the nodes start below the headings
        top = min(r["y"] for r in (svg.locator(".gnode rect").nth(i).bounding_box() for i in range(3)))
        assert top > max(b["y"] + b["height"] for b in boxes)
