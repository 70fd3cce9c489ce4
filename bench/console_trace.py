"""A 10,000-span trace in the console (issue 35): how long its trace page takes to serve and to become usable.

Starts a receiver (``otel-agent serve``'s object, defaults, loopback) on a fresh store, sends one trace of
``--spans`` spans over OTLP/HTTP (a root, 50 agent steps under it, the rest as calls and tools under the steps,
one in twenty with a retry attribute and one in five hundred in error, so the page has problems to open), then:

  * server time over loopback HTTP (median and max of ``--repeat`` after a warm-up; the result cache is
    bypassed with a changing ``find`` argument that matches nothing, so every load reads and renders): the
    trace page as opened (500 spans, "show more"), ``?limit=10000`` (every span), and a zoomed view;
  * in headless Chromium (Debian's /usr/bin/chromium): navigation to ``load`` (the HTML parsed and the
    script's set-up of the tree done, the problems opened), and the time of one key press (``j``) and of one
    expand in the 10,000-row tree, and the HTML's size.

Prints numbers; asserts nothing (tests/console asserts behaviour, not time).

    python bench/console_trace.py                 # 10,000 spans
    python bench/console_trace.py --spans 5000 --repeat 5
"""

from __future__ import annotations

import argparse
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


def timed(url: str, repeat: int) -> tuple[float, float, int]:
    requests.get(url + "&find=warm-0", timeout=120)
    times = []
    size = 0
    for k in range(repeat):
        t = time.perf_counter()
        r = requests.get(url + f"&find=zz-no-match-{k}", timeout=120)
        times.append((time.perf_counter() - t) * 1000)
        r.raise_for_status()
        size = len(r.content)
    return statistics.median(times), max(times), size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
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
            while requests.get(base + "?limit=10000", timeout=120).text.count('class="node') < args.spans:
                if time.time() > deadline:
                    raise SystemExit("the trace did not arrive whole in 120 s")
                time.sleep(1)
            print(f"{'page':44} {'median ms':>10} {'max ms':>8} {'HTML kB':>8}")
            for label, url in (("trace page (first 500 spans)", base + "?limit=500"),
                               (f"trace page, every span (?limit={args.spans})", base + f"?limit={args.spans}"),
                               ("every span, zoomed to 10 %", base + f"?limit={args.spans}&zoom=0.4-0.5")):  # fmt: skip
                med, worst, size = timed(url, args.repeat)
                print(f"{label:44} {med:10.0f} {worst:8.0f} {size / 1000:8.0f}")
            browser_times(base + f"?limit={args.spans}", args.repeat)
        finally:
            receiver.stop()


def browser_times(url: str, repeat: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1440, "height": 900})
        loads, keys, opens = [], [], []
        for k in range(repeat):
            t = time.perf_counter()
            page.goto(url + f"&find=zz-browser-{k}", wait_until="load")
            loads.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            page.keyboard.press("j")
            page.evaluate("document.activeElement.dataset.key")
            keys.append((time.perf_counter() - t) * 1000)
            closed = page.evaluate(
                "[...document.querySelectorAll('tr.node:not(.hidden)')].filter(r => r.dataset.open === '0' && "
                "r.querySelector('.toggle:not(.leaf)')).length"
            )
            t = time.perf_counter()
            page.evaluate(
                "(() => { const r = [...document.querySelectorAll('tr.node:not(.hidden)')].find(r => "
                "r.dataset.open === '0' && r.querySelector('.toggle:not(.leaf)')); "
                "if (r) r.querySelector('.toggle').click(); })()"
            )
            opens.append((time.perf_counter() - t) * 1000)
        shown = page.evaluate("document.querySelectorAll('tr.node:not(.hidden)').length")
        problems = page.evaluate("document.querySelectorAll('tr.node.problem').length")
        b.close()
    print(f"Chromium, every span: load median {statistics.median(loads):.0f} ms (max {max(loads):.0f}); "
          f"a key press {statistics.median(keys):.0f} ms; opening a node {statistics.median(opens):.0f} ms; "
          f"{shown:,} rows shown on load (problems opened: {problems}; {closed} closed nodes)")  # fmt: skip


if __name__ == "__main__":
    main()
