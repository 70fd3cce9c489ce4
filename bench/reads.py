"""Reads at scale (issue 31 §1): the operator's questions, timed through the surfaces a user meets, on a live
receiver filled through OTLP to each of --sizes spans.

A real ``otel-agent serve`` (default settings, so DuckDB's 1 GB memory limit; only the query time limit is raised
to --timeout, so that a slow question is timed instead of cut at the default 10 s) on a new DuckDB file. Client
processes send OTLP/gRPC requests of one shape (``--shape``):

  * ``research``: our instrumentation (bench/derive.py's RunBuilder): runs of 100 spans — flow run, 6 steps,
    skills, provider calls, tools, guards, verifier, evidence records, an artifact and a handoff receipt; 5 runs
    a request;
  * ``genai``: third-party GenAI traces (bench/genai_spans.py): every trace a run of ~8 spans (``invoke_agent``,
    ``chat``, ``execute_tool``, gen_ai.* usage, some errors); 64 traces a request.

Each client keeps one template per stream as a parsed message and, per request, gives it fresh span ids, trace
ids derived from the request's tag (so the benchmark knows the run ids it sent), its id attributes suffixed with
the tag, and its times moved (as bench/soak.py's clients do): every span unique, ≈ 5 CPU ms per 1,000 spans.
The store is filled newest first, --spans-per-day of span time per day going back from the start: at every size
the newest data ends now, the last 24 h hold the same number of spans, and 10 M spans cover a month.

While each size fills, lag probes: a new run is sent, and from its acknowledgement the runs page (``GET /``) and
the runs view (``SELECT run_id FROM runs ORDER BY start_time DESC LIMIT 50`` through the query API) are polled until
they list it. At each size, with ingest stopped, a marker run is sent (and, for the research shape, once, a run of
2,000 spans), then every question is asked once as a warm-up and --repeat times (median, wall clock; a question
over --timeout is printed ``>120 s`` and not repeated):

  * console (HTTP): the runs page's first load after new data (from the first ``GET /`` until a page lists the
    marker run, following the page's "refresh" link), the runs page, filtered by status=error and by agent /
    service, a run page (a 100-span run; the 2,000-span run as first shown and whole), the providers page for the
    last 24 h and for all time, the receipts page, a claim page (research);
  * query API (``POST /v1/query``, otel_agent/query/api_client.py): recent runs, provider_health,
    runs_for_run(?), cost_breakdown_for_run(?), receipt_state (capped by the API's row and byte limits);
  * CLI: ``otel-agent runs --receiver URL`` as a subprocess (its Python start-up included).

Each repeat asks for a page the console's result cache has not seen (another run, claim, ``limit`` or time
bound), so every answer reads the store. Printed: each size's figures as they are measured, then one table of
every question at every size and the growth (largest / smallest size); the load average at the start and end,
the store's bytes per span, the receiver's peak memory.

    python bench/reads.py --shape genai --sizes 1000000,10000000
    python bench/reads.py --shape research --sizes 100000            # a smoke run
    python bench/reads.py --shape genai --sizes 1000000 --ref /work/main   # another checkout's receiver and CLI
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import multiprocessing as mp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import derive
import genai_spans
from agent_spans import kv
from ingest import TRACE_EXPORT, ReceiverProcess, from_checkout
from soak import health, store_bytes

DAY_NS = 86_400 * 10**9
BASE_NS = 1_700_000_000 * 10**9  # templates start here; every request moves its spans to its own time
KEEP_IDS = {"gen_ai.agent.id"}  # id attributes that name something shared by many runs: not made unique
RECENT_RUNS = "SELECT * FROM runs ORDER BY start_time DESC LIMIT 50"
LISTED = "SELECT run_id FROM runs ORDER BY start_time DESC LIMIT 50"
SNAPSHOT_LIMIT_S = 600.0  # the console's time limit on taking its copy of the runs view (console/store.py, before)


# ----------------------------------------------------------------------------------------------------- shapes


def template(shape: str, stream: int, runs: int | None = None) -> bytes:
    """The request template of ``stream`` (deterministic: the parent rebuilds a stream's to know its ids);
    ``runs``: that many runs instead of a full request (the lag probes and markers send one)."""
    rnd = random.Random(1000 + stream)
    if shape == "research":
        n = runs or derive.RUNS_PER_REQUEST
        return derive.make_request(rnd, stream * derive.RUNS_PER_REQUEST, n, BASE_NS, 60 * 10**9)[0]
    service = genai_spans.SERVICES[stream % len(genai_spans.SERVICES)]
    return genai_spans.make_request(rnd, runs or 64, BASE_NS, 10 * 10**9, service)


class Rewriter:
    """One template made into ever new requests: ``apply(tag, start_ns)`` gives every span a new span id, every
    trace the id ``blake2b(tag + old id)``, every id attribute (key ending in ``id``) the suffix ``_tag``, and
    moves all times so that the template's first span starts at ``start_ns``."""

    def __init__(self, body: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        self.msg = ExportTraceServiceRequest.FromString(body)
        self.spans = [s for rs in self.msg.resource_spans for ss in rs.scope_spans for s in ss.spans]
        self.orig = [(s.trace_id, s.span_id, s.parent_span_id, s.start_time_unix_nano, s.end_time_unix_nano,
                      [e.time_unix_nano for e in s.events]) for s in self.spans]  # fmt: skip
        self.t_first = min(s.start_time_unix_nano for s in self.spans)
        self.duration = max(s.end_time_unix_nano for s in self.spans) - self.t_first
        self.ids = [
            (a.value, a.value.string_value)
            for s in self.spans
            for a in s.attributes
            if a.key.endswith("id") and a.key not in KEEP_IDS and a.value.HasField("string_value")
        ]
        self.run_attrs = [
            (a.value.string_value, s.trace_id) for s in self.spans for a in s.attributes if a.key == "otel_agent.run.id"
        ]

    @staticmethod
    def trace_id(tag: str, old: bytes) -> bytes:
        return hashlib.blake2b(tag.encode() + old, digest_size=16).digest()

    def run_ids(self, tag: str) -> list[str]:
        """The run ids of the request ``apply(tag, …)`` makes, in the template's order: our run id attribute, or
        for a trace without one its (new) trace id."""
        if self.run_attrs:
            return list(dict.fromkeys(f"{v}_{tag}" for v, _ in self.run_attrs))
        return list(dict.fromkeys(self.trace_id(tag, o[0]).hex() for o in self.orig))

    def attr(self, key: str, tag: str) -> list[str]:
        """The values (after ``apply(tag, …)``) of the string attribute ``key``, in span order."""
        return [f"{a.value.string_value}_{tag}" for s in self.spans for a in s.attributes if a.key == key]

    def apply(self, tag: str, start_ns: int) -> bytes:
        shift = start_ns - self.t_first
        new_ids = {o[1]: os.urandom(8) for o in self.orig}
        traces: dict[bytes, bytes] = {}
        for s, (tid, sid, parent, start, end, events) in zip(self.spans, self.orig, strict=True):
            if tid not in traces:
                traces[tid] = self.trace_id(tag, tid)
            s.trace_id, s.span_id = traces[tid], new_ids[sid]
            if parent:
                s.parent_span_id = new_ids.get(parent, parent)
            s.start_time_unix_nano, s.end_time_unix_nano = start + shift, end + shift
            for e, t in zip(s.events, events, strict=True):
                e.time_unix_nano = t + shift
        for value, orig in self.ids:
            value.string_value = f"{orig}_{tag}"
        return self.msg.SerializeToString()


def big_run_request(start_ns: int) -> tuple[bytes, str]:
    """One run of 2,000 spans (20 research run bodies under one run id and trace, as bench/console.py's)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    rnd = random.Random(99)
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([kv("service.name", "research-agent")])
    ss = rs.scope_spans.add()
    ss.scope.name = "otel_agent"
    run_id, trace_id = f"run_reads_big_{rnd.getrandbits(32):08x}", rnd.randbytes(16)
    for i in range(20):
        b = derive.RunBuilder(rnd, ss, 900_000 + i, start_ns + i * 120 * 10**9)
        b.run_id, b.trace_id = run_id, trace_id
        b.build()
    return req.SerializeToString(), run_id


# ------------------------------------------------------------------------------------------------------ filling


def grpc_sender(port: int) -> Callable[[bytes], None]:
    """A blocking export to the receiver's gRPC port, retried while the receiver answers 'full'."""
    import grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", 64 << 20)])
    call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)

    def send(body: bytes) -> None:
        while True:
            try:
                call(body, timeout=120)
                return
            except grpc.RpcError as exc:
                if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                    raise
                time.sleep(0.05)

    return send


def client_main(shape: str, port: int, streams: list[int], n_streams: int, phase: int, stop: Any,
                anchor_ns: int, offset_requests: int, ns_per_request: int) -> None:  # fmt: skip
    """One client process: a thread per stream, each sending its template made new (``Rewriter``) and waiting for
    the reply, until ``stop``. Request ``n`` of stream ``s`` is the fill's request ``g = offset + n * n_streams +
    s`` and ends ``g`` request-lengths of span time before ``anchor_ns`` (the store fills newest first; nothing
    it sends is newer than ``anchor_ns``, so the runs the benchmark sends later are the newest)."""
    parent = os.getppid()

    def exit_when_orphaned() -> None:  # a benchmark stopped by a signal must not leave its clients sending
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=exit_when_orphaned, daemon=True).start()

    def worker(stream: int) -> None:
        send = grpc_sender(port)
        rw = Rewriter(template(shape, stream))
        n = 0
        while not stop.is_set():
            g = offset_requests + n * n_streams + stream
            send(rw.apply(f"p{phase}s{stream}n{n}", anchor_ns - g * ns_per_request - rw.duration))
            n += 1

    threads = [threading.Thread(target=worker, args=(s,)) for s in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ----------------------------------------------------------------------------------------------------- timing


class Timeout(Exception):
    """A question that took longer than the benchmark's --timeout (or that the server cut at it)."""


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


class Bench:
    def __init__(self, args: argparse.Namespace, receiver: ReceiverProcess, cli_env: dict[str, Any]) -> None:
        from otel_agent.query.api_client import ReceiverClient

        self.args = args
        self.receiver = receiver
        self.base = f"http://127.0.0.1:{receiver.http_port}"
        self.api = ReceiverClient(f"127.0.0.1:{receiver.http_port}", timeout_s=args.timeout + 10)
        self.cli_env = cli_env
        self.http = requests.Session()

    def page(self, path: str, must: str = "") -> str:
        """GET one console page; its text, which must contain ``must`` (the run or claim it shows: a page that
        answers without its data measured nothing). A server-side time limit (504) or a client timeout is
        ``Timeout``."""
        try:
            r = self.http.get(self.base + path, timeout=self.args.timeout)
        except requests.Timeout as exc:
            raise Timeout from exc
        if r.status_code == 504:
            raise Timeout
        r.raise_for_status()
        if must not in r.text:
            raise RuntimeError(f"GET {path}: the page does not show {must!r}")
        return r.text

    def query(self, sql: str, params: list | None = None, min_rows: int = 1) -> int:
        """One statement through the query API; the number of rows (at least ``min_rows``)."""
        from otel_agent.errors import QueryTimeoutError

        try:
            n = len(self.api.query(sql, params or []).rows)
        except (QueryTimeoutError, requests.Timeout) as exc:
            raise Timeout from exc
        if n < min_rows:
            raise RuntimeError(f"{sql} {params or ''}: {n} rows")
        return n

    def cli_runs(self) -> int:
        """``otel-agent runs --receiver URL`` as a subprocess; the lines it printed."""
        cmd = [sys.executable, "-m", "otel_agent", "runs", "--receiver", self.base]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=self.args.timeout, **self.cli_env)
        except subprocess.TimeoutExpired as exc:
            raise Timeout from exc
        if out.returncode != 0:
            raise RuntimeError(f"otel-agent runs failed ({out.returncode}): {out.stderr.strip()[-300:]}")
        return len(out.stdout.splitlines())

    def timed(self, ask: Callable[[int], Any]) -> dict[str, Any]:
        """``ask(0)`` as a warm-up, then ``ask(1..repeat)``: median and max wall seconds, the receiver's CPU
        seconds per ask, what the last ask returned. A warm-up over --timeout is the answer (not repeated)."""
        t0 = time.perf_counter()
        try:
            ask(0)
        except Timeout:
            return {"timeout": True, "warm": time.perf_counter() - t0}
        except Exception as exc:  # a failed question is reported as such, the others are still asked
            return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        warm = time.perf_counter() - t0
        times, result = [], None
        cpu0 = sum(self.receiver.cpu_seconds())
        for i in range(1, self.args.repeat + 1):
            t0 = time.perf_counter()
            try:
                result = ask(i)
            except Timeout:
                return {"timeout": True, "warm": warm}
            except Exception as exc:
                return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            times.append(time.perf_counter() - t0)
        cpu = (sum(self.receiver.cpu_seconds()) - cpu0) / self.args.repeat
        return {"median": statistics.median(times), "max": max(times), "warm": warm, "cpu": cpu, "result": result}

    def until_listed(self, since: float, poll: Callable[[int], bool], deadline_s: float) -> float | None:
        """Seconds from ``since`` until ``poll(i)`` (i = 0, 1, …) is true, or None past ``deadline_s``."""
        i = 0
        while time.time() - since < deadline_s:
            try:
                if poll(i):
                    return time.time() - since
            except Exception:  # a poll cut by a time limit (408, 504) or refused: poll again
                pass
            i += 1
            time.sleep(0.5)
        return None

    def page_lists(self, run_id: str) -> Callable[[int], bool]:
        """The runs page lists ``run_id``: the first look is ``GET /``; then the page's "refresh" link."""
        return lambda i: f'href="/runs/{run_id}"' in self.page("/?refresh=1" if i else "/")

    def view_lists(self, run_id: str) -> Callable[[int], bool]:
        return lambda i: any(r[0] == run_id for r in self.api.query(LISTED).rows)


def lag_probes(
    bench: Bench, shape: str, size_no: int, span_range: tuple[int, int], filling: threading.Event, out: list[dict]
) -> None:
    """While ``filling`` is set, --lag-probes times, spread over the fill from ``span_range[0]`` to
    ``span_range[1]`` committed spans: send one new run, then poll the runs page and the runs view (in parallel,
    each again as soon as it answered, at most every 0.5 s) until each lists it or --timeout passes. Each probe's
    lags go to ``out``. The polls are load too (on the before code a poll of the view reads the whole store), so
    there are few of them."""
    send = grpc_sender(bench.receiver.grpc_port)
    rw = Rewriter(template(shape, 9_999, runs=1))
    j, (lo, hi) = 0, span_range
    while filling.is_set() and j < bench.args.lag_probes:
        at = lo + (hi - lo) * (j + 1) // (bench.args.lag_probes + 1)
        if int(health(bench.receiver.http_port)["items_committed"]) < at:
            time.sleep(0.5)
            continue
        tag = f"lag{size_no}x{j}"
        body = rw.apply(tag, time.time_ns())
        (run_id,) = rw.run_ids(tag)
        send(body)
        acked = time.time()
        found: dict[str, float | None] = {}

        def watch(name: str, poll: Callable[[int], bool], found: dict = found, acked: float = acked) -> None:
            found[name] = bench.until_listed(acked, poll, bench.args.timeout)

        watchers = [threading.Thread(target=watch, args=("page", bench.page_lists(run_id))),
                    threading.Thread(target=watch, args=("view", bench.view_lists(run_id)))]  # fmt: skip
        for w in watchers:
            w.start()
        for w in watchers:
            w.join()
        out.append({**found, "during_fill": filling.is_set()})
        j += 1


def settle(http_port: int, timeout_s: float) -> float | None:
    """Wait until the receiver's maintained state has folded every stored row (``/healthz`` → ``derived``:
    ready, no backlog), so that the questions are asked of a receiver at rest, not one still catching up after
    the fill (which takes a core and made the first figures mostly waiting); the seconds it took (None: not
    within ``timeout_s``). How soon a *new* run is listed is measured apart (the lag probes, the first load)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        derived = health(http_port).get("derived") or {}
        if derived.get("ready") and not derived.get("backlog_rows"):
            return time.monotonic() - t0
        time.sleep(0.5)
    return None


def fill_to(bench: Bench, shape: str, size: int, size_no: int, anchor_ns: int, lags: list[dict]) -> float:
    """Send the clients' load until the receiver has committed ``size`` spans, with lag probes meanwhile; then
    stop the clients (every request acknowledged is committed). Returns the fill's spans/s."""
    args = bench.args
    before = int(health(bench.receiver.http_port)["items_committed"])
    request_spans = len(Rewriter(template(shape, 0)).spans)
    ns_per_request = int(request_spans * DAY_NS / args.spans_per_day)
    offset = before // request_spans + 1
    n_streams = args.clients * args.inflight
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    procs = [
        ctx.Process(
            target=client_main,
            args=(shape, bench.receiver.grpc_port, list(range(c, n_streams, args.clients)), n_streams, size_no,
                  stop, anchor_ns, offset, ns_per_request),
            daemon=True,  # a benchmark stopped by Ctrl-C ends them too
        )
        for c in range(args.clients)
    ]  # fmt: skip
    t0 = time.time()
    for p in procs:
        p.start()
    filling = threading.Event()
    filling.set()
    probe_args = (bench, shape, size_no, (before, size), filling, lags)
    prober = threading.Thread(target=lag_probes, args=probe_args, daemon=True)
    if args.lag_probes:
        prober.start()
    done, last_report = before, time.time()
    while done < size:
        time.sleep(0.5)
        done = int(health(bench.receiver.http_port)["items_committed"])
        if time.time() - last_report > 30:
            last_report = time.time()
            rate = (done - before) / (time.time() - t0)
            print(f"    {done:>12,} spans  {rate:>8,.0f}/s  load {os.getloadavg()[0]:.1f}", flush=True)
    elapsed = time.time() - t0
    stop.set()
    filling.clear()
    for p in procs:
        p.join()
    if prober.is_alive():
        prober.join()
    done = int(health(bench.receiver.http_port)["items_committed"])
    return (done - before) / elapsed


def questions(bench: Bench, shape: str, ids: dict[str, Any]) -> list[tuple[str, Callable[[int], Any]]]:
    """(label, ask(i)) of every question; ask(i) of another i reads a page the result cache has not seen."""
    runs, claims, big = ids["runs"], ids["claims"], ids.get("big")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    day_ago = now - dt.timedelta(hours=24)
    agent = "triage_agent" if shape == "genai" else None
    out: list[tuple[str, Callable[[int], Any]]] = [
        ("console: runs page /", lambda i: bench.page(f"/?limit={50 + i}", must='href="/runs/')),
        ("console: runs page ?status=error", lambda i: bench.page(f"/?status=error&limit={50 + i}")),
        (
            f"console: runs page ?q={agent}" if agent else "console: runs page ?service=coding-agent",
            lambda i: bench.page(f"/?q={agent}&limit={50 + i}" if agent else f"/?service=coding-agent&limit={50 + i}"),
        ),
        ("console: run page (a normal run)", lambda i: bench.page(f"/runs/{runs[i]}", must=runs[i])),
    ]
    if big:
        out += [
            ("console: run page, 2,000-span run", lambda i: bench.page(f"/runs/{big}?limit={500 + i}", must=big)),
            (
                "console: run page, 2,000-span run whole",
                lambda i: bench.page(f"/runs/{big}?limit={2000 + i}", must=big),
            ),
        ]
    out += [
        (
            "console: providers, last 24 h",
            lambda i: bench.page(f"/providers?from={day_ago - dt.timedelta(minutes=i):%Y-%m-%dT%H:%M}"),
        ),
        (
            "console: providers, all time",
            lambda i: bench.page(f"/providers?range=all&to=2100-01-01T00:{i:02d}"),
        ),
        (
            "console: receipts page",
            lambda i: bench.page(f"/receipts?at={now + dt.timedelta(minutes=i):%Y-%m-%dT%H:%M}"),
        ),
    ]
    if claims:
        out.append(("console: claim page", lambda i: bench.page(f"/claims/{claims[i]}", must=claims[i])))
    out += [
        ("API: recent runs (LIMIT 50)", lambda i: bench.query(RECENT_RUNS)),
        ("API: provider_health", lambda i: bench.query("SELECT * FROM provider_health")),
        ("API: runs_for_run(?)", lambda i: bench.query("SELECT * FROM runs_for_run(?)", [runs[i]])),
        ("API: cost_breakdown_for_run(?)", lambda i: bench.query("SELECT * FROM cost_breakdown_for_run(?)", [runs[i]])),
        (
            "API: receipt_state",
            lambda i: bench.query("SELECT * FROM receipt_state", min_rows=1 if shape == "research" else 0),
        ),
        ("CLI: otel-agent runs --receiver", lambda i: bench.cli_runs()),
    ]
    return out


def known_ids(shape: str, repeat: int) -> dict[str, Any]:
    """Runs and claims the fill sent (stream 0 of the first fill, requests 1…repeat+1): one per ask."""
    rw = Rewriter(template(shape, 0))
    tags = [f"p0s0n{n}" for n in range(1, repeat + 2)]
    claims = [rw.attr("otel_agent.claim.id", tag)[0] for tag in tags] if shape == "research" else []
    return {"runs": [rw.run_ids(tag)[0] for tag in tags], "claims": claims}


def measure(bench: Bench, shape: str, size_no: int, ids: dict[str, Any], results: dict[str, dict]) -> None:
    """Every question at this size, into ``results`` as each is answered (an interrupted run keeps them)."""
    args = bench.args
    marker = Rewriter(template(shape, 9_998, runs=1))
    tag = f"mark{size_no}"
    body = marker.apply(tag, time.time_ns())
    (run_id,) = marker.run_ids(tag)
    grpc_sender(bench.receiver.grpc_port)(body)
    t0 = time.time()
    # Past --timeout the page is still polled until it lists the run (up to the console's 600 s limit on taking
    # its copy of the runs view): a copy still being taken would share the CPU with the questions after this one.
    first = bench.until_listed(t0, bench.page_lists(run_id), max(args.timeout, SNAPSHOT_LIMIT_S))
    label = "console: runs page, first load after new data"
    if first is not None and first <= args.timeout:
        results[label] = {"median": first, "single": True}
        print(f"  {label:<48} {fmt_s(first)}", flush=True)
    else:
        results[label] = {"timeout": True}
        print(f"  {label:<48} >{args.timeout:g} s (listed after {fmt_s(first) if first else 'never'})", flush=True)
    for label, ask in questions(bench, shape, ids):
        if args.only and args.only not in label:
            continue
        r = bench.timed(ask)
        results[label] = r
        if r.get("timeout"):
            print(f"  {label:<48} >{args.timeout:g} s (warm-up {fmt_s(r['warm'])})", flush=True)
        elif r.get("error"):
            print(f"  {label:<48} FAILED: {r['error']}", flush=True)
        else:
            got = r["result"]
            what = f"{len(got) / 1024:.0f} KiB" if isinstance(got, str) else f"{got} rows/lines"
            print(f"  {label:<48} median {fmt_s(r['median']):>9}  max {fmt_s(r['max']):>9}  warm-up "
                  f"{fmt_s(r['warm']):>9}  receiver CPU {fmt_s(r['cpu']):>9}  {what}", flush=True)  # fmt: skip


# ------------------------------------------------------------------------------------------------------- report


def cell(r: dict | None, timeout: float) -> str:
    if r is None:
        return "—"
    if r.get("error"):
        return "failed"
    if r.get("timeout"):
        return f">{timeout:g} s"
    return fmt_s(r["median"])


def growth(first: dict | None, last: dict | None, timeout: float) -> str:
    if not first or not last or first.get("timeout") or first.get("error") or last.get("error"):
        return "—"
    if last.get("timeout"):
        return f">{timeout / first['median']:.1f}x"
    return f"{last['median'] / first['median']:.1f}x"


def lag_cell(lags: list[dict], key: str, timeout: float) -> dict | None:
    got = [x[key] for x in lags if key in x]
    if not got:
        return None
    if all(v is None for v in got):
        return {"timeout": True}
    return {"median": statistics.median(v if v is not None else timeout for v in got), "n": len(got),
            "missed": sum(v is None for v in got)}  # fmt: skip


def table(shape: str, sizes: list[int], per_size: list[dict], timeout: float) -> str:
    labels: list[str] = []
    for s in per_size:
        labels += [k for k in s["results"] if k not in labels]
    head = f"| question ({shape}) | " + " | ".join(f"{n:,} spans" for n in sizes) + " | growth |"
    lines = [head, "|" + " --- |" * (len(sizes) + 2)]
    rows = [(label, [s["results"].get(label) for s in per_size]) for label in labels]
    rows += [(f"lag: new run listed, {name}", [lag_cell(s["lags"], key, timeout) for s in per_size])
             for key, name in (("page", "runs page"), ("view", "runs view (API)"))]  # fmt: skip
    for label, cells in rows:
        g = growth(cells[0], cells[-1], timeout) if len(sizes) > 1 else "—"
        lines.append(f"| {label} | " + " | ".join(cell(c, timeout) for c in cells) + f" | {g} |")
    lines.append("| store bytes per span | " + " | ".join(f"{s['bytes_per_span']:.0f}" for s in per_size) + " | |")
    lines.append("| fill spans/s (with lag probes) | " + " | ".join(f"{s['rate']:,.0f}" for s in per_size) + " | |")
    lines.append(
        "| derived state caught up, after the fill | "
        + " | ".join(fmt_s(s["catch_up"]) if s.get("catch_up") is not None else "—" for s in per_size)
        + " | |"
    )
    lines.append("| receiver peak PSS | " + " | ".join(f"{s['pss'] / 2**20:,.0f} MB" for s in per_size) + " | |")
    lines.append("| load average at measuring (start–end) | "
                 + " | ".join(f"{s['load'][0]:.1f}–{s['load'][1]:.1f}" for s in per_size) + " | |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=("research", "genai"), required=True)
    ap.add_argument("--sizes", default="1000000,10000000", help="spans in the store at each measurement, rising")
    ap.add_argument("--repeat", type=int, default=3, help="asks after the warm-up (median)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a question may take")
    ap.add_argument("--clients", type=int, default=2, help="client processes")
    ap.add_argument("--inflight", type=int, default=4, help="requests in flight per client (a stream each)")
    ap.add_argument("--spans-per-day", type=int, default=333_333, help="span time: this many spans a day")
    ap.add_argument("--lag-probes", type=int, default=2, help="lag probes during each size's fill (0: none)")
    ap.add_argument("--only", default="", help="ask only the questions whose label contains this")
    ap.add_argument("--receiver-args", default="", help="more arguments of otel-agent serve")
    ap.add_argument("--ref", default="", help="run another checkout's receiver and CLI (e.g. /work/main)")
    ap.add_argument("--keep", default="", help="keep the store at this path")
    ap.add_argument(
        "--settle-timeout",
        type=float,
        default=1800.0,
        help="seconds to wait for the derived state to catch up after each fill",
    )
    args = ap.parse_args()
    sizes = sorted(int(x) for x in args.sizes.split(","))
    smallest = (args.repeat + 3) * args.clients * args.inflight * 512  # known_ids: requests 1…repeat+1 of stream 0
    if sizes[0] < smallest:
        ap.error(f"--sizes: at least {smallest:,} spans with these --repeat, --clients and --inflight")

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = os.getloadavg()
    print(f"{started}; load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}; shape {args.shape}; "
          f"sizes {', '.join(f'{n:,}' for n in sizes)}; {os.cpu_count()} cores", flush=True)  # fmt: skip
    tmp = tempfile.mkdtemp(prefix="otel-agent-reads-")
    db = os.path.join(tmp, "reads.duckdb")
    extra = ["--query-timeout-s", f"{args.timeout:g}", *args.receiver_args.split()]
    checkout = from_checkout(args.ref) if args.ref else {}
    receiver = ReceiverProcess(db, extra, **checkout)
    cli_env = checkout or {}
    bench = Bench(args, receiver, cli_env)
    anchor_ns = time.time_ns()
    ids = known_ids(args.shape, args.repeat)
    per_size: list[dict] = []
    try:
        for size_no, size in enumerate(sizes):
            print(f"\nfilling to {size:,} spans …", flush=True)
            lags: list[dict] = []
            rate = fill_to(bench, args.shape, size, size_no, anchor_ns, lags)
            if args.shape == "research" and "big" not in ids:
                body, ids["big"] = big_run_request(time.time_ns() - 3600 * 10**9)
                grpc_sender(receiver.grpc_port)(body)
            committed = int(health(receiver.http_port)["items_committed"])
            for x in lags:
                print(f"  lag probe: runs page {fmt_s(x.get('page')) if x.get('page') is not None else '>timeout'},"
                      f" runs view {fmt_s(x.get('view')) if x.get('view') is not None else '>timeout'}"
                      f"{'' if x['during_fill'] else ' (ended after the fill)'}")  # fmt: skip
            catch_up = settle(receiver.http_port, args.settle_timeout)
            print(
                f"  derived state caught up {fmt_s(catch_up) if catch_up is not None else '(not within the timeout)'}"
                " after the fill",
                flush=True,
            )
            load0 = os.getloadavg()[0]
            print(f"{committed:,} spans committed ({rate:,.0f} spans/s); {store_bytes(db) / committed:.0f} B/span; "
                  f"load average {load0:.2f}; asking …", flush=True)  # fmt: skip
            entry = {"results": {}, "lags": lags, "rate": rate, "bytes_per_span": store_bytes(db) / committed,
                     "load": (load0, load0), "pss": 0, "catch_up": catch_up}  # fmt: skip
            per_size.append(entry)
            measure(bench, args.shape, size_no, ids, entry["results"])
            entry["load"], entry["pss"] = (load0, os.getloadavg()[0]), receiver.peak_pss
            print(f"  receiver peak RSS {receiver.peak_rss / 2**20:,.0f} MB, PSS {receiver.peak_pss / 2**20:,.0f} MB; "
                  f"load average {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    except KeyboardInterrupt:  # the table still shows what was measured ("—": not asked)
        print("\ninterrupted", flush=True)
    finally:
        receiver.stop()
        if args.keep and os.path.exists(db):
            shutil.move(db, args.keep)
        shutil.rmtree(tmp, ignore_errors=True)
    load_end = os.getloadavg()
    print(f"\n{started} → {time.strftime('%H:%M UTC', time.gmtime())}; load average at start "
          f"{load_start[0]:.2f}, at end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}; "
          f"medians of {args.repeat} after a warm-up; timeout {args.timeout:g} s\n")  # fmt: skip
    print(table(args.shape, sizes[: len(per_size)], per_size, args.timeout), flush=True)


if __name__ == "__main__":
    main()
