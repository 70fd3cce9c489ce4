"""A 10,000-span trace in the console (issue 35): how long its trace page takes to serve and to become usable.

Starts a receiver (``otel-agent serve``'s object, defaults, loopback) on a fresh store, sends one trace of
``--spans`` spans over OTLP/HTTP (a root, 50 agent steps under it, the rest as calls and tools under the steps,
one in twenty with a retry attribute and one in five hundred in error, so the page has problems to open), then:

  * server time over loopback HTTP (median and max of ``--repeat``), each load *uncached*: before it, one span of
    another trace is stored and the result cache's freshness (1 s) let pass, so the trace is read again, as on a
    first visit: the trace page as opened (every span; past 1,500 spans the tree is sent in part: the open part,
    the rest as closed nodes and gaps), ``?limit=500``, a zoomed view, and one closed node's children as the
    page's script asks for them (``/tree?parent=…&fragment=1``; cached: just after the page, as when clicked);
  * in headless Chromium (Debian's /usr/bin/chromium), the page as opened, uncached: DOMContentLoaded (the HTML
    parsed and the script's set-up of the tree done, the problems opened), first contentful paint (the tree is
    the page's content), load, and the time of one key press (``j``) and of opening a closed node (its children
    fetched and inserted), and the HTML's size and rows.

Prints numbers and the load average; asserts nothing (tests/console asserts behaviour, not time).

    python bench/console_trace.py                 # 10,000 spans
    python bench/console_trace.py --spans 5000 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from otel_agent.config import ReceiverConfig
from otel_agent.main import serving
from tests.otlp_builders import T0, post_traces, span_request

TRACE = bytes.fromhex("7e57" * 8)


def trace_request(n: int) -> bytes:
    spans = [{"trace_id": TRACE, "span_id": (1).to_bytes(8, "big"), "name": "invoke_agent big",
              "start": T0, "end": T0 + n * 1_000_000,
               "attributes": {"gen_ai.operation.name": "invoke_agent"}}]  # fmt: skip
    steps = 50
    for i in range(2, n + 1):
        start = T0 + i * 900_000
        if i <= steps + 1:
            parent, name, attrs = 1, f"step {i}", {"otel_agent.step.name": f"step {i}"}
            end = start + (n // steps) * 900_000
        else:
            parent = 2 + (i % steps)
            if i % 2:
                name, attrs = "chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                              "gen_ai.request.model": "gpt-4o",
                                              "gen_ai.usage.input_tokens": 100}  # fmt: skip
            else:
                name, attrs = (
                    "execute_tool search",
                    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
                )
            if i % 20 == 0:
                attrs["otel_agent.retry.count"] = 1
            end = start + 400_000
        spans.append({"trace_id": TRACE, "span_id": i.to_bytes(8, "big"), "parent_span_id": parent.to_bytes(8, "big"),
                      "name": name, "start": start, "end": end, "attributes": attrs})  # fmt: skip
    req = span_request(spans, service="bench-agent")
    for i, s in enumerate(req.resource_spans[0].scope_spans[0].spans):
        if i > 60 and i % 500 == 0:
            s.status.code = 2
    return req.SerializeToString()


OTHER = bytes.fromhex("0be5" * 8)


def invalidate(base_url: str, k: int) -> None:
    """Store one span of another trace and let the result cache's freshness pass: the next load reads again."""
    req = span_request([{"trace_id": OTHER, "span_id": (1000 + k).to_bytes(8, "big"), "name": f"tick {k}"}])
    assert post_traces(base_url, req).status_code == 200
    time.sleep(1.2)


def timed(address: str, url: str, repeat: int, cached: bool = False) -> tuple[float, float, int]:
    requests.get(url, timeout=120)
    times = []
    size = 0
    for _ in range(repeat):
        if not cached:
            invalidate(address, next(TICKS))
        t = time.perf_counter()
        r = requests.get(url, timeout=120)
        times.append((time.perf_counter() - t) * 1000)
        r.raise_for_status()
        size = len(r.content)
    return statistics.median(times), max(times), size


TICKS = iter(range(10**6))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        config = ReceiverConfig.resolve(db=f"{tmp}/trace.duckdb", grpc_endpoint="127.0.0.1:0",
                                        http_endpoint="127.0.0.1:0")  # fmt: skip
        receiver = serving(config).start()
        try:
            body = trace_request(args.spans)
            t = time.perf_counter()
            assert post_traces(receiver.http_address, body, timeout=300).status_code == 200
            print(
                f"sent {args.spans:,} spans in one request ({len(body) / 1e6:.1f} MB) "
                f"in {time.perf_counter() - t:.1f} s"
            )
            base = f"{receiver.http_address}/traces/{TRACE.hex()}"
            deadline = time.time() + 120
            while len(requests.get(base + ".json", timeout=120).json()["data"]["trace"]["spans"]) < args.spans:
                if time.time() > deadline:
                    raise SystemExit("the trace did not arrive whole in 120 s")
                time.sleep(1)
            html = requests.get(base, timeout=120).text
            closed = re.search(r'<tr id="[^"]+" class="[^"]*" data-key="([^"]+)"[^>]*data-lazy="(\d+)"', html)
            step = closed.group(1) if closed else f"{TRACE.hex()}:{(3).to_bytes(8, 'big').hex()}"
            fragment = f"{base}/tree?parent={step}&fragment=1"
            print(f"{'page':52} {'median ms':>10} {'max ms':>8} {'HTML kB':>8}")
            for label, url, cached in (
                (f"trace page as opened (every span, {args.spans:,})", base, False),
                ("trace page, first 500 spans (?limit=500)", base + "?limit=500", False),
                ("every span, zoomed to 10 %", base + "?zoom=0.4-0.5", False),
                (f"a closed node's children (fragment, {closed.group(2) if closed else '?'} rows; cached)",
                 fragment, True),
            ):  # fmt: skip
                med, worst, size = timed(receiver.http_address, url, args.repeat, cached)
                print(f"{label:52} {med:10.0f} {worst:8.0f} {size / 1000:8.0f}")
            browser_times(receiver.http_address, base, args.repeat)
        finally:
            receiver.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def browser_times(address: str, url: str, repeat: int) -> None:
    from playwright.sync_api import sync_playwright

    nav = (
        "(() => { const n = performance.getEntriesByType('navigation')[0]; "
        "const p = performance.getEntriesByName('first-contentful-paint')[0]; "
        "return [n.domContentLoadedEventEnd, p ? p.startTime : -1, n.loadEventEnd]; })()"
    )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1440, "height": 900})
        dcls, paints, loads, keys, opens = [], [], [], [], []
        for k in range(repeat):
            invalidate(address, next(TICKS))
            page.goto(url + f"?b={k}", wait_until="load")
            dcl, fcp, load = page.evaluate(nav)
            dcls.append(dcl)
            paints.append(fcp)
            loads.append(load)
            t = time.perf_counter()
            page.keyboard.press("j")
            page.evaluate("document.activeElement.dataset.key")
            keys.append((time.perf_counter() - t) * 1000)
            lazy = page.locator("tr.node[data-lazy]").first
            if lazy.count():
                key = lazy.get_attribute("data-key")
                t = time.perf_counter()
                lazy.locator(".toggle").click()
                page.locator(f'tr.node[data-parent="{key}"]').last.wait_for()
                opens.append((time.perf_counter() - t) * 1000)
        shown = page.evaluate("document.querySelectorAll('tr.node:not(.hidden)').length")
        sent = page.evaluate("document.querySelectorAll('tr.node').length")
        problems = page.evaluate("document.querySelectorAll('tr.node.problem').length")
        b.close()
    med = statistics.median
    print(f"Chromium, the page as opened (uncached): DOMContentLoaded {med(dcls):.0f} ms (max {max(dcls):.0f}), "
          f"first contentful paint {med(paints):.0f} ms, load {med(loads):.0f} ms (max {max(loads):.0f}); "
          f"a key press {med(keys):.0f} ms; opening a closed node {med(opens) if opens else float('nan'):.0f} ms "
          f"(fetch + insert); {sent:,} rows in the page after that, {shown:,} shown "
          f"(problems: {problems})")  # fmt: skip


if __name__ == "__main__":
    main()
