"""Web console benchmark (issue 13 §5): page server time on a large store, and what serving pages costs ingest.

Builds (once) the 1 M-span store of bench/derive.py (10 000 runs of 100 spans shaped like our instrumentation's
output, through the receiver's fold and writer) plus one 2,000-span run (20 run bodies under one run id and
trace), then starts ``otel-agent serve`` on a copy and times, over loopback HTTP (server time: query + render;
median and max of --repeat after a warm-up):

  * the runs page            GET /                          target < 300 ms (over its snapshot of the runs view;
                                                             the time to take that copy is printed first)
  * the 2,000-span run page  GET /runs/{big}  (500 rows shown, "show more")  and  ?limit=2000   target < 500 ms
  * a claim page             GET /claims/{claim}            target < 100 ms

``--breakdown``: the same pages in this process (no HTTP server), each named query timed, uncached and repeated.

Then the ingest cost: bench/ingest.py's client processes send gRPC at a paced 20,000 spans/s for --duration
seconds into a receiver on a fresh copy of the store, first alone, then while one client loads the three pages
in a loop (``--light``: the runs and claim pages; ``--vary``: a different runs page offset and claim page each
time, so the console's result cache never answers); it prints committed spans/s and export p50/p99 for both and
the page loads done.

``--ingest-cost``: the ingest cost measured for a shared machine instead (one receiver, paced ingest throughout,
windows alternating without and with a page reader, ratios per neighbouring windows; see ``ingest_cost``).

    python bench/console.py                       # builds /tmp/otel_agent_derive_1m.duckdb if missing
    python bench/console.py --ingest-cost --rate 20000 --windows 8 --window 5
    python bench/console.py --spans 200000 --db /tmp/c200k.duckdb --rebuild
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import derive
import ingest
from store_options import add_store_options

BIG_RUN = "run_console_bench_big"


def add_big_run(path: str, bodies: int = 20) -> None:
    """One run of bodies × 100 spans (one trace), written through the receiver's fold and writer."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from otel_agent.fold.decode import PROTOBUF, decode_payload
    from otel_agent.fold.redact import Redactor, load_rules
    from otel_agent.ingest.writer import Writer
    from otel_agent.store.database import open_store

    rnd = random.Random(99)
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([derive.kv("service.name", "bench-big")])
    ss = rs.scope_spans.add()
    ss.scope.name = "otel_agent"
    trace_id = rnd.randbytes(16)
    start = 1_792_000_000_000_000_000
    for i in range(bodies):
        b = derive.RunBuilder(rnd, ss, 900_000 + i, start + i * 5_000_000_000)
        b.run_id, b.trace_id = BIG_RUN, trace_id
        b.build()
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 62)
    writer.write(decode_payload("traces", PROTOBUF, req.SerializeToString(), Redactor(load_rules(None)), None, 0))
    writer.close()
    con.execute("CHECKPOINT").fetchall()
    con.close()


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) the process has used: what a page costs the receiver's other
    work, far steadier than wall time on a loaded machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_get(url_of: Callable[[int], str], repeat: int, pid: int) -> tuple[float, float, int, float]:
    """(median ms, max ms, bytes, receiver CPU ms per request) of GET url_of(i) for i = 1..repeat after one
    warm-up (i = 0). With ``--uncached`` url_of gives a different URL of the same page each time, so the
    console's result cache never answers."""
    s = requests.Session()
    r = s.get(url_of(0), timeout=120)
    r.raise_for_status()
    times = []
    cpu0 = cpu_s(pid)
    for i in range(1, repeat + 1):
        t0 = time.perf_counter()
        r = s.get(url_of(i), timeout=120)
        times.append((time.perf_counter() - t0) * 1000)
        r.raise_for_status()
    return statistics.median(times), max(times), len(r.content), (cpu_s(pid) - cpu0) * 1000 / repeat


def breakdown(db: str, paths: dict[str, str], repeat: int) -> None:
    """Per-query figures of each page, in this process (``--breakdown``): the console of ``otel-agent ui`` over
    ``db`` read-only, pages requested through Starlette's test client, every named query timed (wall and this
    process's CPU, all threads) by wrapping ``read.source.CursorSource``; the rest of the page time is Python
    (rows → dicts, tree, rendering). Median of ``repeat`` after a warm-up."""
    from starlette.testclient import TestClient

    from otel_agent.console.app import build_ui_app, ui_console
    from otel_agent.read.source import CursorSource
    from otel_agent.server.auth import Authenticator

    timings: list[tuple[str, float, float]] = []

    def timed(fn):
        def wrapper(self, name, *args, **kw):
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(self, name, *args, **kw)
            finally:
                label = name if name.isidentifier() else " ".join(name.split())[:40]
                timings.append((label, (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000))

        return wrapper

    CursorSource.table = timed(CursorSource.table)
    CursorSource.scope = timed(CursorSource.scope)
    mounted = ui_console([db], Authenticator.from_file(None), query_timeout_s=120.0)
    cache = mounted.console.store.results
    with TestClient(build_ui_app(mounted)) as client:
        for label, path in paths.items():
            client.get(path).raise_for_status()  # warm-up (the runs page: its first snapshot)
            if path == "/" or path.startswith("/?"):
                while 'class="grid runs"' not in client.get(path).text:
                    time.sleep(0.5)
            med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
            for cached in (False, True):  # every load reads the store; then loads the result cache answers
                cache.entries = 32 if cached else 0
                cache.clear()
                client.get(path).raise_for_status()
                per_query: dict[str, list[tuple[float, float]]] = {}
                pages: list[tuple[float, float]] = []
                for _ in range(repeat):
                    timings.clear()
                    w0, c0 = time.perf_counter(), time.process_time()
                    r = client.get(path)
                    pages.append(((time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000))
                    r.raise_for_status()
                    for name, w, c in timings:
                        per_query.setdefault(name, []).append((w, c))
                how = "repeated (result cache)" if cached else "uncached"
                print(f"  {label:<55} {how:<24} page wall {med(pages, 0):6.0f} ms  CPU {med(pages, 1):6.0f} ms")
                for name, xs in per_query.items():
                    n = len(xs) // repeat
                    print(f"      {name:<26} wall {med(xs, 0):6.1f} ms  CPU {med(xs, 1):6.1f} ms  (x{n})")
    mounted.close()


def page_loader(base: str, paths: list[str], stop: threading.Event, done: list[float]) -> None:
    s = requests.Session()
    while not stop.is_set():
        for p in paths:
            t0 = time.perf_counter()
            s.get(base + p, timeout=120).raise_for_status()
            done.append((time.perf_counter() - t0) * 1000)
            if stop.is_set():
                return


def ingest_phase(db: str, args: argparse.Namespace, pages: list[str] | None) -> dict:
    receiver = ingest.ReceiverProcess(db, [])
    base = f"http://127.0.0.1:{receiver.http_port}"
    ctx = mp.get_context("spawn")
    out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Queue()
    per_client = args.rate / args.clients
    n_requests = int(per_client * args.duration / 512 * 1.3) + 2
    procs = [ctx.Process(target=ingest.client_main, args=("grpc", receiver.grpc_port, c + 1, n_requests, 512, 2,
                                                          args.duration, per_client, per_client, False, ready, go,
                                                          out)) for c in range(args.clients)]  # fmt: skip
    for p in procs:
        p.start()
    for _ in procs:
        ready.get()
    stop, loads = threading.Event(), []
    loader = None
    if pages and args.warm:  # take the runs snapshot before the clients start (its first copy is not counted)
        while 'class="grid runs"' not in requests.get(base + "/", timeout=300).text:
            time.sleep(0.5)
    if pages:
        loader = threading.Thread(target=page_loader, args=(base, pages, stop, loads), daemon=True)
        loader.start()
    start_at = time.time() + 1.0
    for _ in procs:
        go.put(start_at)
    results = [out.get() for _ in procs]
    stop.set()
    for p in procs:
        p.join()
    if loader:
        loader.join(timeout=60)
    receiver.stop()
    lat = sorted(x for r in results for x in r["lat"])
    return {
        "spans_per_s": sum(r["acked"] for r in results) / args.duration,
        "p50_ms": lat[len(lat) // 2] * 1000 if lat else None,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1000 if lat else None,
        "page_loads": len(loads),
        "page_median_ms": statistics.median(loads) if loads else None,
    }


def paced_reader(
    base: str,
    pages: list[str],
    rate: float,
    on: threading.Event,
    busy: threading.Event,
    stop: threading.Event,
    done: list[tuple[float, float]],
) -> None:
    """Load ``pages`` in turn (each once: the result cache never answers) while ``on`` is set, at ``rate`` pages/s
    (0: back to back); ``busy`` is set during a load; ``done`` gets (time, ms) of each load."""
    s = requests.Session()
    i = 0
    while not stop.is_set():
        if not on.wait(0.05):
            continue
        t0 = time.perf_counter()
        busy.set()
        try:
            s.get(base + pages[i % len(pages)], timeout=120).raise_for_status()
        finally:
            busy.clear()
        done.append((time.time(), (time.perf_counter() - t0) * 1000))
        i += 1
        if rate:
            time.sleep(max(0.0, 1 / rate - (time.perf_counter() - t0)))


def committed(base: str) -> int:
    """The receiver's committed items so far (``/healthz`` without a tokens file shows its writer counters)."""
    return int(requests.get(base + "/healthz", timeout=30).json()["items_committed"])


def ingest_cost(db: str, args: argparse.Namespace, pages: list[str]) -> None:
    """``--ingest-cost``: what serving pages costs ingest, measured so that it means something on a shared
    machine. One receiver, one paced ingest (bench/ingest.py's gRPC clients at --rate spans/s for the whole
    run), and --windows windows of --window seconds alternating without and with a page reader (ABAB…): the
    machine's other load changes over minutes, so each window with the reader is compared with the windows
    around it. The --settle seconds after each switch are not measured: a paced client that fell behind
    catches up as fast as it can, which would credit one mode's backlog to the next window. Per window:
    committed spans/s (the receiver's writer counter) and the receiver's CPU (its
    process and its decode workers) per 1,000 committed spans. Printed: every window, the median of each
    mode, and the median of the pairwise ratios (a B window over the mean of its neighbouring A windows)."""
    receiver = ingest.ReceiverProcess(db, [])
    base = f"http://127.0.0.1:{receiver.http_port}"
    try:
        while 'class="grid runs"' not in requests.get(base + "/", timeout=300).text:  # the runs copy, first
            time.sleep(0.5)
        warm = 3.0
        total = warm + args.windows * (args.settle + args.window) + 5.0
        ctx = mp.get_context("spawn")
        out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Queue()
        per_client = args.rate / args.clients
        n_requests = int(per_client * total / 512 * 1.3) + 2
        procs = [ctx.Process(target=ingest.client_main, args=("grpc", receiver.grpc_port, c + 1, n_requests, 512, 2,
                                                              total, per_client, per_client, False, ready, go, out))
                 for c in range(args.clients)]  # fmt: skip
        for p in procs:
            p.start()
        for _ in procs:
            ready.get()
        on, busy, stop, loads = threading.Event(), threading.Event(), threading.Event(), []
        reader = threading.Thread(target=paced_reader, args=(base, pages, args.reader_rate, on, busy, stop, loads))
        reader.start()
        start_at = time.time() + 1.0
        for _ in procs:
            go.put(start_at)
        time.sleep(start_at + warm - time.time())
        windows = []
        for w in range(args.windows):
            reading = w % 2 == 1
            if reading:
                on.set()
            else:  # an A window starts once the last page load of the B window before it has returned
                on.clear()
                deadline = time.time() + 60
                while busy.is_set() and time.time() < deadline:
                    time.sleep(0.01)
            # not measured: the paced clients send what they fell behind by as soon as they can, so the first
            # moments after a switch still carry the other mode's backlog
            time.sleep(args.settle)
            n0, (m0, d0), t0, k0 = committed(base), receiver.cpu_seconds(), time.time(), len(loads)
            time.sleep(args.window)
            n1, (m1, d1), t1, k1 = committed(base), receiver.cpu_seconds(), time.time(), len(loads)
            spans = n1 - n0
            cpu = (m1 - m0) + (d1 - d0)
            windows.append({"reading": reading, "spans_s": spans / (t1 - t0), "cpu_per_k": cpu * 1000 / max(spans, 1),
                            "cpu_s": cpu / (t1 - t0), "pages": k1 - k0, "load": os.getloadavg()[0]})  # fmt: skip
            mode = "B with pages " if reading else "A ingest only"
            x = windows[-1]
            print(
                f"  window {w + 1:2d} {mode} {x['spans_s']:9,.0f} spans/s  receiver CPU {x['cpu_s']:4.2f} cores,"
                f" {x['cpu_per_k'] * 1000:6.1f} ms per 1,000 spans  pages {x['pages']:3d}  load {x['load']:.1f}"
            )
        on.clear()
        stop.set()
        reader.join(timeout=60)
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
    finally:
        receiver.stop()
    a = [x for x in windows if not x["reading"]]
    b = [x for x in windows if x["reading"]]
    ratios, cpu_ratios = [], []
    for i, x in enumerate(windows):
        near = [windows[j] for j in (i - 1, i + 1) if 0 <= j < len(windows)]
        if x["reading"] and near:
            ratios.append(x["spans_s"] / statistics.mean(y["spans_s"] for y in near))
            cpu_ratios.append(x["cpu_per_k"] / statistics.mean(y["cpu_per_k"] for y in near))
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    page_ms = [ms for _, ms in loads]
    print(f"  offered {args.rate:,.0f} spans/s ({args.clients} gRPC clients); reader: "
          f"{'back to back' if not args.reader_rate else f'{args.reader_rate:g} pages/s'}, "
          f"{len(loads)} page loads (median {statistics.median(page_ms) if page_ms else 0:.0f} ms)")  # fmt: skip
    print(
        f"  A ingest only   median {med(a, 'spans_s'):9,.0f} spans/s  {med(a, 'cpu_per_k') * 1000:6.1f} ms CPU"
        f" per 1,000 spans"
    )
    print(
        f"  B with pages    median {med(b, 'spans_s'):9,.0f} spans/s  {med(b, 'cpu_per_k') * 1000:6.1f} ms CPU"
        f" per 1,000 spans"
    )
    print(
        f"  B / A (each B window over its neighbours): committed spans/s x{statistics.median(ratios):.3f} "
        f"(range {min(ratios):.3f}–{max(ratios):.3f}); CPU per committed span x{statistics.median(cpu_ratios):.3f}"
    )
    if med(a, "spans_s") < 0.95 * args.rate:
        print(
            f"  note: ingest alone committed {med(a, 'spans_s'):,.0f} of the {args.rate:,.0f} spans/s offered: the"
            " machine does not sustain that rate now (a lower --rate measures the cost below saturation)"
        )
    retries = sum(r["retries"] for r in results)
    if retries:
        print(f"  note: {retries} export retries (the receiver answered retryable 'full')")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_store_options(ap)
    ap.add_argument("--rate", type=float, default=20_000)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--duration", type=float, default=15.0)
    ap.add_argument("--no-ingest", action="store_true", help="only the page timings")
    ap.add_argument("--no-pages", action="store_true", help="only the ingest cost")
    ap.add_argument("--light", action="store_true", help="the page loop: runs and claim pages only")
    ap.add_argument("--only", default="", help="time only the pages whose label contains this (e.g. 'run page')")
    ap.add_argument(
        "--breakdown",
        action="store_true",
        help="per-query wall/CPU of each page, in this process over the file read-only (no HTTP server)",
    )
    ap.add_argument(
        "--uncached",
        action="store_true",
        help="page timings: a URL of its own for each request (the console's result cache never answers)",
    )
    ap.add_argument(
        "--vary",
        action="store_true",
        help="the page loop: a different runs page offset and claim each time (no page repeats)",
    )
    ap.add_argument("--warm", action="store_true", help="take the runs snapshot before ingest starts")
    ap.add_argument(
        "--ingest-cost",
        action="store_true",
        help="alternate paced-ingest windows without and with a page reader (ABAB…) in one receiver; ratios",
    )
    ap.add_argument("--windows", type=int, default=8, help="--ingest-cost: windows (even: A, odd: B)")
    ap.add_argument("--window", type=float, default=5.0, help="--ingest-cost: seconds per window")
    ap.add_argument(
        "--settle", type=float, default=2.0, help="--ingest-cost: seconds after each switch that are not measured"
    )
    ap.add_argument(
        "--reader-rate", type=float, default=2.0, help="--ingest-cost: pages/s the reader loads (0: back to back)"
    )
    args = ap.parse_args()

    if args.rebuild or not os.path.exists(args.db):
        print(f"building {args.db} ({args.spans:,} spans)…", file=sys.stderr)
        derive.build_store(args.db, args.spans, 7)
    con = duckdb.connect(args.db, read_only=True)
    has_big = con.execute("SELECT count(*) FROM spans WHERE run_id = ?", [BIG_RUN]).fetchone()[0]
    con.close()
    if not has_big:
        add_big_run(args.db)
    con = duckdb.connect(args.db, read_only=True)
    n_spans, big_spans = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE run_id = ?) FROM spans", [BIG_RUN]
    ).fetchone()
    last_day = con.execute("SELECT max(start_time) - INTERVAL 1 DAY FROM spans").fetchone()[0]
    claim = con.execute(
        "SELECT record_id FROM spans WHERE record_kind = 'claim' ORDER BY start_time LIMIT 1 OFFSET 5000"
    ).fetchone()[0]
    claims = [r[0] for r in con.execute(
        "SELECT record_id FROM spans WHERE record_kind = 'claim' ORDER BY start_time LIMIT 2000 OFFSET 5001"
    ).fetchall()]  # fmt: skip
    run_ids = [r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM spans WHERE run_id IS NOT NULL AND run_id <> ? ORDER BY run_id LIMIT 2000",
        [BIG_RUN],
    ).fetchall()]  # fmt: skip
    con.close()
    print(f"store: {n_spans:,} spans; big run {big_spans:,} spans; load average {os.getloadavg()}")

    tmp = tempfile.mkdtemp(prefix="console_bench_")
    try:
        if args.ingest_cost:
            # an operator's pages, none seen before (the result cache never answers): a runs page further down
            # each time, a run page of another 100-span run, a claim; every 20th page the 2,000-span run's page
            loop = []
            for i, (run_id, claim_id) in enumerate(zip(run_ids, claims, strict=False)):
                loop += [f"/?offset={i}", f"/runs/{run_id}", f"/claims/{claim_id}"]
                if i % 7 == 6:
                    loop.append(f"/runs/{BIG_RUN}?limit={500 + i}")
            copy = os.path.join(tmp, "ingest.duckdb")
            shutil.copy(args.db, copy)
            ingest_cost(copy, args, loop)
            print(f"load average after: {os.getloadavg()}")
            return
        if not args.no_pages:
            copy = os.path.join(tmp, "pages.duckdb")
            shutil.copy(args.db, copy)
            day = f"{last_day:%Y-%m-%dT%H:%M}"
            # label: the page's URL for request i; --uncached: a URL of its own for each request (one more row
            # shown, another claim, a window a minute shorter, an upper bound far in the future)
            u = args.uncached
            pages: dict[str, Callable[[int], str]] = {
                "runs page  GET /": lambda i: f"/?limit={50 + i}" if u else "/",
                "runs page  GET /?sort=cost&status=ok": lambda i: (
                    "/?sort=cost&status=ok" + (f"&limit={50 + i}" if u else "")
                ),
                f"run page   GET /runs/{BIG_RUN} (500 rows)": lambda i: (
                    f"/runs/{BIG_RUN}" + (f"?limit={500 + i}" if u else "")
                ),
                f"run page   GET /runs/{BIG_RUN}?limit=2000": lambda i: f"/runs/{BIG_RUN}?limit={2000 + i * u}",
                f"run page   GET /runs/{BIG_RUN}?limit=50": lambda i: f"/runs/{BIG_RUN}?limit={50 + i * u}",
                "claim page GET /claims/{claim}": lambda i: f"/claims/{claims[i] if u else claim}",
                "providers  GET /providers (default range)": lambda i: "/providers",
                "providers  GET /providers?from=(the store's last day)": lambda i: (
                    f"/providers?from={last_day + dt.timedelta(minutes=i):%Y-%m-%dT%H:%M}"
                    if u
                    else f"/providers?from={day}"
                ),
                "providers  GET /providers?range=all": lambda i: (
                    f"/providers?to=2100-01-01T00:{i:02d}" if u else "/providers?range=all"
                ),
            }
            pages = {label: fn for label, fn in pages.items() if args.only in label}
            if args.breakdown:
                breakdown(copy, {label: fn(0) for label, fn in pages.items()}, args.repeat)
                return
            receiver = ingest.ReceiverProcess(copy, [])
            base = f"http://127.0.0.1:{receiver.http_port}"
            if any(label.startswith("runs page") for label in pages):
                t0 = time.perf_counter()
                while 'class="grid runs"' not in requests.get(base + "/", timeout=120).text:
                    time.sleep(0.5)
                print(f"  first copy of the runs view (the runs page's snapshot): {time.perf_counter() - t0:.1f} s")
            for label, url_of in pages.items():
                try:
                    med, worst, size, cpu = time_get(lambda i, f=url_of: base + f(i), args.repeat, receiver.proc.pid)
                except requests.HTTPError as exc:  # e.g. 504: the page's queries exceeded the query time limit
                    print(f"  {label:<55} {exc.response.status_code} {exc.response.reason}")
                    continue
                print(
                    f"  {label:<55} median {med:7.0f} ms  max {worst:7.0f} ms  {size / 1024:6.0f} KiB"
                    f"  CPU {cpu:6.0f} ms"
                )
            receiver.stop()
        if not args.no_ingest:
            loop = ["/", f"/claims/{claim}"] if args.light else ["/", f"/runs/{BIG_RUN}", f"/claims/{claim}"]
            if args.vary:  # no page twice: every load reads the store (the console's result cache never answers)
                loop = [p for i, c in enumerate(claims) for p in (f"/?offset={i}", f"/claims/{c}")]
            for label, with_pages in (("ingest alone", None), ("ingest + pages", loop)):
                db = os.path.join(tmp, f"ingest-{bool(with_pages)}.duckdb")
                shutil.copy(args.db, db)
                r = ingest_phase(db, args, with_pages)
                print(f"  {label:<16} {r['spans_per_s']:9,.0f} spans/s  p50 {r['p50_ms']:6.0f} ms"
                      f"  p99 {r['p99_ms']:6.0f} ms"
                      f"  page loads {r['page_loads']} (median {r['page_median_ms'] or 0:.0f} ms)")  # fmt: skip
                os.remove(db)
        print(f"load average after: {os.getloadavg()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
