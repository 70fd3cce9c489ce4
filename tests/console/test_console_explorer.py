"""The run and trace pages as a trace explorer, in headless Chromium: problems open and marked on load with a
strip that jumps to each, the waterfall's share of the width, the resizable split, the critical path,
find-in-trace, zoom and the minimap of a big trace, the root span's name as the title, a keyboard-only journey,
and a call's messages as a chat (hostile text stays text)."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.conftest import Live, own_receiver, save_shot
from tests.otlp_builders import T0, kvs, span_request

RUN = "run_demo_deep_research"
XSS_TEXT = "<img src=x onerror=window.__xss=7>"
XSS_TOOL = "<script>window.__xss=8</script>"


def run_trace(live: Live) -> str:
    return live.rows("SELECT trace_id FROM runs WHERE run_id = ?", [RUN])[0][0]


def png_pixel(data: bytes, x: int, y: int) -> tuple[int, int, int]:
    """The RGB of one pixel of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are), decoded
    here rather than with an image library the project does not otherwise need."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    channels = 3
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, _, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, interlace) == (8, 0), (depth, interlace)
            assert color in (2, 6), color
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    prev = bytearray(stride)
    for row in range(y + 1):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
    r, g, b = prev[x * channels : x * channels + 3]
    return r, g, b


def test_run_page_opens_on_its_problems(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + f"/runs/{RUN}")
    problems = page.locator("tr.node.problem")
    assert problems.count() == 4  # two retries, a fallback, a blocked guard (the demo's story)
    depths = [int(problems.nth(i).get_attribute("data-depth")) for i in range(problems.count())]
    assert max(depths) >= 3  # inside a skill, which is collapsed by default
    for i in range(problems.count()):
        assert problems.nth(i).is_visible(), problems.nth(i).inner_text()
    strip = page.locator("#problems a.jump")
    assert strip.count() == 4
    assert "4 problems" in page.inner_text("#problems")
    marks = page.inner_text("#problems")
    assert "fallback from tavily" in marks
    assert "blocked" in marks
    assert "retry" in marks
    # pixels: a problem row carries a red bar at its left edge
    row = problems.first.bounding_box()
    shot = page.screenshot(clip={"x": row["x"], "y": row["y"], "width": 4, "height": row["height"]})
    r, g, b = png_pixel(shot, 1, int(row["height"] / 2))
    assert r > 150, (r, g, b)
    assert max(g, b) < 110, (r, g, b)
    # the strip jumps to the node: selected, details loaded, bookmarkable
    blocked = page.locator("#problems a.jump", has_text="blocked")
    blocked.click()
    page.locator("#details .span-details").wait_for()
    selected = page.locator("tr.node.selected")
    assert selected.count() == 1
    assert "blocked" in selected.inner_text()
    assert "output.citation_required" in page.inner_text("#details h2") or "blocked" in page.inner_text("#details")
    assert "span=" in page.url
    save_shot(page, shots, "run_problem_selected")
    assert page.errors == []


def test_waterfall_is_at_least_half_the_width_and_the_split_resizes(page_as: Any, live: Live) -> None:
    page = page_as("bob-query", width=1440)
    page.goto(live.url + f"/runs/{RUN}?span={run_trace(live)}:" + live.rows(
        "SELECT span_id FROM spans WHERE run_id = ? AND name LIKE 'chat%' LIMIT 1", [RUN])[0][0])  # fmt: skip
    page.locator("#details .span-details").wait_for()
    wf = page.locator("tr.node td.wfcell").first.bounding_box()
    assert wf["width"] >= 0.5 * 1440, wf
    details = page.locator("#details").bounding_box()
    gutter = page.locator("#gutter").bounding_box()
    page.mouse.move(gutter["x"] + 5, gutter["y"] + 40)
    page.mouse.down()
    page.mouse.move(gutter["x"] - 195, gutter["y"] + 40, steps=5)
    page.mouse.up()
    wider = page.locator("#details").bounding_box()
    assert wider["width"] > details["width"] + 150, (details, wider)
    page.locator("#gutter").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#details").bounding_box()["width"] < wider["width"]
    assert page.errors == []


def test_trace_title_critical_path_and_find(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    trace = run_trace(live)
    page.goto(live.url + f"/traces/{trace}")
    assert page.inner_text("h1") == "invoke_workflow deep_research"  # the root span's name, not the hex id
    assert trace in page.inner_text(".pagehead .sub")
    assert page.title().startswith("invoke_workflow deep_research")
    # the critical path is a chain from the root: every node on it but the root has its parent on it
    crit = page.eval_on_selector_all("tr.node.critical", "rows => rows.map(r => [r.dataset.key, r.dataset.parent])")
    keys = {k for k, _ in crit}
    assert len(crit) >= 3
    assert sum(1 for _, p in crit if not p) == 1
    assert all(p in keys for _, p in crit if p)
    assert page.locator("rect.critline").count() == len(crit)
    # find by an attribute value (the fallback's original provider), typed after "/" with the keyboard only
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "find"
    page.keyboard.type("tavily")
    page.keyboard.press("Enter")
    page.wait_for_url("**find=tavily**")
    found = page.locator("tr.node.found")
    assert found.count() == 1
    assert found.first.is_visible()
    assert "exa/search" in found.first.inner_text()
    assert "1 match" in page.inner_text("#find-count")
    # by name, case-insensitively
    page.goto(live.url + f"/traces/{trace}?find=WEB_FETCH")
    tools = page.locator("tr.node", has_text="web_fetch").filter(has=page.locator("a.k-tool_invocation"))
    assert tools.count() == 4
    assert page.locator("tr.node.found a.k-tool_invocation").count() == 4  # and the call whose prompt names it
    save_shot(page, shots, "trace_find")
    assert page.errors == []


COLLAPSED = """[...document.querySelectorAll('tr.node:not(.hidden)')]
    .find(r => r.dataset.open === '0' && r.querySelector('.toggle:not(.leaf)')).dataset.key"""
"""A shown node that is closed on load (no problem below it)."""


def test_keyboard_only_journey(page_as: Any, live: Live) -> None:
    page = page_as("bob-query")
    page.goto(live.url + f"/runs/{RUN}")
    page.keyboard.press("j")  # into the tree
    focused = page.evaluate("document.activeElement.dataset.key")
    assert focused
    assert focused.endswith(":" + focused.split(":")[1])
    style = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert style != "none"  # a visible focus
    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("k")
    key = page.evaluate("document.activeElement.dataset.key")
    rows = page.eval_on_selector_all("tr.node:not(.hidden)", "rs => rs.map(r => r.dataset.key)")
    assert rows.index(key) == 2  # the first j focuses row 0, three more go to 3, k back to 2
    # a collapsed skill opens with the right arrow and closes with the left
    skill_key = page.evaluate(COLLAPSED)
    skill = page.locator(f'tr.node[data-key="{skill_key}"]')
    skill.evaluate("r => document.querySelector('table.tree').focusRow(r)")
    children = page.locator(f'tr.node[data-parent="{skill_key}"]')
    assert not children.first.is_visible()
    page.keyboard.press("ArrowRight")
    assert children.first.is_visible()
    page.keyboard.press("ArrowRight")  # to the first child
    assert page.evaluate("document.activeElement.dataset.parent") == skill_key
    page.keyboard.press("Enter")  # details of the focused node
    page.locator("#details .span-details").wait_for()
    assert page.locator("tr.node.selected").get_attribute("data-parent") == skill_key
    page.keyboard.press("ArrowLeft")  # a leaf: to its parent
    assert page.evaluate("document.activeElement.dataset.key") == skill_key
    page.keyboard.press("ArrowLeft")
    assert not children.first.is_visible()
    page.keyboard.press("?")
    assert page.locator("#keyhelp").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#keyhelp").is_visible()
    # the runs list: j / k between rows, Enter opens one
    page.goto(live.url + "/")
    page.keyboard.press("j")
    first = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("j")
    second = page.evaluate("document.activeElement.getAttribute('href')")
    assert first != second
    assert second.startswith("/runs/")
    page.keyboard.press("Enter")
    page.wait_for_url("**" + second)
    assert page.errors == []


# ---- a store of our own: calls with messages in each convention, hostile text, and a big trace ----------------

MSG_TRACE = bytes.fromhex("c0ffee00" * 4)
TURN2_TRACE = bytes.fromhex("c0ffee02" * 4)
SESSION = "conv-<b>42</b>"
BIG_TRACE = bytes.fromhex("b16b16b1" * 4)
BIG = 1500


def _messages_request() -> bytes:
    genai = {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief. " + XSS_TEXT}]),
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris? " + XSS_TEXT}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": XSS_TOOL,
                                              "arguments": {"city": XSS_TEXT}}]},
            {"role": "tool",
             "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rainy " + XSS_TEXT}]},
        ]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "finish_reason": "stop",
                                               "parts": [{"type": "text", "content": "It rains. " + XSS_TEXT}]}]),
    }  # fmt: skip
    openinference = {
        "openinference.span.kind": "LLM", "llm.model_name": "claude",
        "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "oi system",
        "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": "oi question",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"q": "oi"}',
    }  # fmt: skip
    vercel = {
        "ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini",
        "ai.prompt.messages": json.dumps([
            {"role": "system", "content": "vercel system"},
            {"role": "user", "content": [{"type": "text", "text": "vercel question"}]},
            {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t1", "toolName": "weather",
                                               "args": {"city": "Oslo"}}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t1", "toolName": "weather",
                                          "result": {"temp": 3}}]},
        ]),
        "ai.response.text": "vercel answer",
    }  # fmt: skip
    spans = [
        {"trace_id": MSG_TRACE, "span_id": bytes.fromhex("0000000000000001"), "name": "agent turn", "start": T0,
         "end": T0 + 9_000_000},
        {"trace_id": MSG_TRACE, "span_id": bytes.fromhex("0000000000000002"), "parent_span_id":
         bytes.fromhex("0000000000000001"), "name": "chat gpt-4o", "start": T0 + 1_000_000, "end": T0 + 3_000_000,
         "attributes": genai},
        {"trace_id": MSG_TRACE, "span_id": bytes.fromhex("0000000000000003"), "parent_span_id":
         bytes.fromhex("0000000000000001"), "name": "ChatAnthropic", "start": T0 + 3_000_000, "end": T0 + 5_000_000,
         "attributes": openinference},
        {"trace_id": MSG_TRACE, "span_id": bytes.fromhex("0000000000000004"), "parent_span_id":
         bytes.fromhex("0000000000000001"), "name": "ai.generateText.doGenerate", "start": T0 + 5_000_000,
         "end": T0 + 8_000_000, "attributes": vercel},
    ]  # fmt: skip
    for sp in spans[1:]:
        sp["attributes"]["gen_ai.conversation.id"] = SESSION
    # a second turn of the same conversation, in a trace of its own, which fails
    spans.append({"trace_id": TURN2_TRACE, "span_id": bytes.fromhex("0000000000000009"), "name": "chat gpt-4o",
                  "start": T0 + 60_000_000_000, "end": T0 + 61_000_000_000,
                  "attributes": {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                 "gen_ai.request.model": "gpt-4o", "gen_ai.conversation.id": SESSION,
                                 "error.type": "timeout"}})  # fmt: skip
    req = span_request(spans, service="chat-svc")
    stored = req.resource_spans[0].scope_spans[0].spans
    stored[4].status.code = 2
    # an evaluation of the first call, recorded as a span event on it
    event = stored[1].events.add()
    event.name = "gen_ai.evaluation.result"
    event.time_unix_nano = T0 + 3_500_000
    event.attributes.extend(kvs({"gen_ai.evaluation.name": "Relevance", "gen_ai.evaluation.score.value": 0.25,
                                 "gen_ai.evaluation.score.label": "irrelevant",
                                 "gen_ai.evaluation.explanation": "answered " + XSS_TEXT}))  # fmt: skip
    return req.SerializeToString()


def _big_request() -> bytes:
    """A trace of BIG spans: a root, 30 workers under it, the rest spread under the workers, one in error."""
    spans = [{"trace_id": BIG_TRACE, "span_id": (1).to_bytes(8, "big"), "name": "big root", "start": T0,
              "end": T0 + BIG * 1_000_000}]  # fmt: skip
    for i in range(2, BIG + 1):
        parent = 1 if i <= 31 else 2 + (i % 30)
        start = T0 + i * 600_000
        attrs = {"worker.index": i}
        if i == BIG - 7:
            attrs["error.type"] = "boom"
        spans.append({"trace_id": BIG_TRACE, "span_id": i.to_bytes(8, "big"), "parent_span_id":
                      parent.to_bytes(8, "big"), "name": f"work {i}", "start": start, "end": start + 300_000,
                      "attributes": attrs})  # fmt: skip
    req = span_request(spans, service="big-svc")
    req.resource_spans[0].scope_spans[0].spans[BIG - 8].status.code = 2
    return req.SerializeToString()


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A receiver of its own (no tokens, loopback) with the two traces above."""
    root = tmp_path_factory.mktemp("console_explorer")
    with own_receiver(root, "explorer.duckdb", _messages_request(), _big_request()) as url:
        yield url


@pytest.fixture
def own_page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda e: page.errors.append(str(e)))  # type: ignore[attr-defined]
    yield page
    ctx.close()


def test_messages_render_as_a_chat_and_hostile_text_stays_text(own: str, own_page: Any, shots: Path) -> None:
    page = own_page
    trace = MSG_TRACE.hex()
    page.goto(own + f"/traces/{trace}?span=0000000000000002")
    chat = page.locator("#details section.chat")
    roles = chat.locator(".msg .role").all_inner_texts()
    assert [r.lower() for r in roles] == ["system", "user", "assistant", "tool", "assistant"]
    text = chat.inner_text()
    assert "Weather in Paris? " + XSS_TEXT in text
    assert XSS_TOOL in chat.locator(".toolcall").inner_text()  # the tool's name, as text
    assert '"city"' in chat.locator(".toolcall pre").inner_text()
    assert "rainy " + XSS_TEXT in chat.locator(".toolresult").inner_text()
    assert "finish: stop" in text
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("img[src=x]").count() == 0
    assert page.evaluate("document.scripts.length") == 1
    # the raw JSON, one click away
    raw = page.locator("#details details.raw")
    assert not raw.locator("pre").first.is_visible()
    raw.locator("summary").click()
    assert "gen_ai.input.messages" in raw.inner_text()
    assert raw.locator("pre").first.is_visible()
    save_shot(page, shots, "chat_genai")
    # OpenInference and the Vercel AI SDK, through the script path (fragment fetched and inserted)
    page.goto(own + f"/traces/{trace}")
    page.locator(f"#n-{trace}-0000000000000003 span.title").click()
    page.locator("#details section.chat").wait_for()
    assert [r.lower() for r in page.locator("#details .msg .role").all_inner_texts()] == ["system", "user", "assistant"]
    assert "lookup" in page.inner_text("#details .toolcall")
    page.locator(f"#n-{trace}-0000000000000004 span.title").click()
    page.locator("#details h2", has_text="ai.generateText").wait_for()
    roles = [r.lower() for r in page.locator("#details .msg .role").all_inner_texts()]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert "weather" in page.inner_text("#details .toolcall")
    assert "vercel answer" in page.inner_text("#details")
    save_shot(page, shots, "chat_vercel")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []


def test_big_trace_minimap_zoom_and_show_more(own: str, own_page: Any, shots: Path) -> None:
    page = own_page
    trace = BIG_TRACE.hex()
    page.goto(own + f"/traces/{trace}?limit=2000")
    assert page.locator("tr.node").count() == BIG
    assert page.locator("svg.minimap rect").count() <= 240  # drawn in bands
    assert page.locator("svg.minimap rect.bad").count() == 1  # the failing span's band
    # the error deep in the tree is open and in the strip
    assert page.locator("#problems a.jump").count() == 1
    assert page.locator("tr.node.problem").first.is_visible()
    labels = page.locator("th.wfhead .axis-labels span").all_inner_texts()
    # drag across the minimap's second quarter: the waterfall shows that part
    box = page.locator("#minimap").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.25, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=4)
    page.mouse.up()
    page.wait_for_url("**zoom=**")
    zoomed = page.locator("th.wfhead .axis-labels span").all_inner_texts()
    assert zoomed != labels
    assert zoomed[0] != "0.0 ms"
    assert page.locator("svg.minimap rect.window").count() == 1
    # bars outside the window are not drawn; the ones inside are wider than at full scale
    assert 0 < page.locator("svg.wf rect:not(.critline)").count() < BIG
    page.locator("#zoom-in").click()
    page.wait_for_load_state()
    assert page.locator("th.wfhead .axis-labels span").all_inner_texts() != zoomed
    save_shot(page, shots, "big_trace_zoomed")
    page.goto(own + f"/traces/{trace}?limit=500")  # the first 500, and a way to more (by default: every span)
    assert page.locator("tr.node").count() == 500
    assert "Show more spans" in page.inner_text(".more")
    assert page.errors == []


def test_dark_mode_colours(browser: Any, live: Live) -> None:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    try:
        page = ctx.new_page()
        page.goto(live.url + "/signin")
        page.fill("input[name=token]", "bob-query")
        page.click("button[type=submit]")
        page.wait_for_url(live.url + "/")
        page.goto(live.url + f"/runs/{RUN}")
        bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        ink = page.evaluate("getComputedStyle(document.body).color")
        panel = page.evaluate("getComputedStyle(document.querySelector('.panel')).backgroundColor")

        def lum(css: str) -> float:
            r, g, b = (int(x) for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
            return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

        assert lum(bg) < 0.15, bg
        assert lum(panel) < 0.2, panel
        assert lum(ink) > 0.8, ink
    finally:
        ctx.close()


AXE = Path(__file__).parent / "vendor" / "axe.min.js"
"""axe-core 4.11.0 (MPL-2.0, from npm: ``npm pack axe-core@4.11.0``), run in the page by the accessibility test."""
AXE_RUN = """async () => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}});
  return r.violations.map(v => v.id + ' (' + v.impact + '): '
    + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
}"""


def _signed_in(browser: Any, live: Live, **options: Any) -> Any:
    ctx = browser.new_context(**options)
    page = ctx.new_page()
    page.goto(live.url + "/signin")
    page.fill("input[name=token]", "bob-query")
    page.click("button[type=submit]")
    page.wait_for_url(live.url + "/")
    return ctx, page


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_passes_axe_wcag_aa(browser: Any, live: Live, scheme: str) -> None:
    """axe-core's WCAG 2 A and AA rules (contrast included) on every page, in both colour schemes. The CSP is
    bypassed for this context only, to inject axe (the pages' own script is unchanged)."""
    from tests.console.test_console_browser import pages

    source = AXE.read_text(encoding="utf-8")
    ctx, page = _signed_in(browser, live, viewport={"width": 1440, "height": 900}, color_scheme=scheme,
                           bypass_csp=True)  # fmt: skip
    try:
        trace = run_trace(live)
        span = live.rows("SELECT span_id FROM spans WHERE trace_id = ? AND name LIKE 'chat%' LIMIT 1", [trace])[0][0]
        extra = [("span_chat", f"/traces/{trace}?span={span}", "Messages")]
        found = {}
        for name, path, _ in pages(live) + extra:
            page.goto(live.url + path)
            page.add_script_tag(content=source)
            violations = page.evaluate(AXE_RUN)
            if violations:
                found[name] = violations
        assert found == {}
    finally:
        ctx.close()


def test_every_page_fits_a_phone(page_as: Any, live: Live, shots: Path) -> None:
    """At 390 px no page scrolls sideways (wide tables scroll inside their panel), the nav stays in its bar and
    the tree keeps a usable name column."""
    from tests.console.test_console_browser import pages

    page = page_as("bob-query", width=390)
    for name, path, _text in pages(live):
        page.goto(live.url + path)
        scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client, (name, scroll, client)
        bar = page.locator("header.topbar").bounding_box()
        nav = page.locator("header.topbar nav").bounding_box()
        assert nav["x"] >= 0, (name, nav)
        assert nav["x"] + nav["width"] <= bar["width"] + 0.5, (name, nav, bar)
        save_shot(page, shots, f"phone_{name}")
    page.goto(live.url + f"/runs/{RUN}")
    name_cell = page.locator("tr.node td").first.bounding_box()
    assert name_cell["width"] >= 200, name_cell
    assert page.locator("tr.node.problem").first.is_visible()
    assert page.errors == []


def test_lineage_graph_links_and_ties_evidence_to_sources(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + "/claims/claim_demo_draft_share")
    graph = page.locator("svg.graph")
    keys = graph.locator("a.gnode").evaluate_all("ns => ns.map(n => n.dataset.key)")
    assert "c:claim_demo_draft_share" in keys
    assert "s:src_demo_survey_a" in keys
    assert any(k.startswith("ct:") for k in keys)
    assert any(k.startswith("e:") for k in keys)
    assert any(k.startswith("x:") for k in keys)  # the conflict, beside the claim
    assert graph.locator("path.edge.conflict").count() >= 1
    # each evidence item says which source it came from, and the source which evidence it backs
    ev = page.locator("#ev-ev_demo_survey_a")
    assert "from State of agents survey 2025 (exa)" in ev.locator(".from-source").inner_text()
    assert "ev_demo_survey_a" in page.locator("#src-src_demo_survey_a .backs").inner_text()
    # a node is a link: the source node scrolls to its card, the evidence's source link too
    graph.locator('a.gnode[data-key="s:src_demo_survey_a"]').click()
    assert page.url.endswith("#src-src_demo_survey_a")
    ev.locator(".from-source a").click()
    assert page.evaluate("document.querySelector(':target').id") == "src-src_demo_survey_a"
    save_shot(page, shots, "claim_graph")
    assert page.errors == []


def test_agents_graph_nodes_open_their_spans_and_the_other_run(page_as: Any, live: Live, shots: Path) -> None:
    page = page_as("bob-query")
    page.goto(live.url + f"/runs/{RUN}")
    graph = page.locator("#agents svg.graph")
    keys = graph.locator("a.gnode").evaluate_all("ns => ns.map(n => n.dataset.key)")
    assert {"run", "a:research_agent", "t:web_fetch", "m:openai/gpt-4o", "r:run_demo_fact_check"} <= set(keys), keys
    assert graph.locator("path.edge.handoff").count() >= 1
    labels = graph.locator("text.elabel").evaluate_all("ts => ts.map(t => t.textContent)")
    assert "4×" in labels  # four web_fetch calls
    save_shot(page, shots, "run_agents_graph")
    graph.locator('a.gnode[data-key="t:web_fetch"]').click()
    page.wait_for_url("**find=web_fetch**")
    assert page.locator("tr.node.found a.k-tool_invocation").count() == 4
    page.goto(live.url + f"/runs/{RUN}")
    page.locator('#agents a.gnode[data-key="r:run_demo_fact_check"]').click()
    page.wait_for_url("**/runs/run_demo_fact_check")
    assert "fact_check" in page.inner_text("h1")
    assert page.errors == []


def test_sessions_and_evaluations(own: str, own_page: Any, shots: Path) -> None:
    page = own_page
    page.goto(own + "/")
    page.click("nav a[href='/sessions']")
    row = page.locator("table.sessions tbody tr", has_text=SESSION)
    assert row.count() == 1
    cells = row.locator("td").all_inner_texts()
    assert (cells[4], cells[5]) == ("2", "1"), cells  # two runs, one failed
    row.locator("a").first.click()
    page.wait_for_url("**/sessions/**")
    assert SESSION in page.inner_text("h1")  # as text
    turns = page.locator("ol.turns li")
    assert turns.count() == 2
    assert "bad" in (turns.nth(1).get_attribute("class") or "")  # the failing turn, second in order
    save_shot(page, shots, "session")
    turns.first.locator("a", has_text="evaluations").click()
    page.wait_for_url("**/evaluations?run=**")
    ev = page.locator("table.evaluations tbody tr")
    assert ev.count() == 1
    text = ev.inner_text()
    assert "Relevance" in text
    assert "irrelevant" in text
    assert "answered " + XSS_TEXT in text
    assert page.locator("img[src=x]").count() == 0
    ev.locator("td:nth-child(5) a").click()
    page.wait_for_url("**span=0000000000000002**")
    assert page.locator("tr.node.selected").count() == 1
    # the span details link to its scores
    page.locator("#details a", has_text="scores of this span").click()
    page.wait_for_url("**/evaluations?trace=**")
    assert page.locator("table.evaluations tbody tr").count() == 1
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []
