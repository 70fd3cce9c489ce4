"""What the derived SQL costs at query time on third-party GenAI spans, this checkout (or ``--against REV``) against
``--baseline REV``: made to measure the SQL that Fidelity III (issue 32) added to the classification and the run
views — the root agent naming the run, what makes a run, failures walked up to their origin, typed errors, the
Vercel AI SDK's ``ai.*`` spans, three time-to-first-chunk names, user metadata, MCP, A2A — whose baseline is the
commit its branch started from, ca10883.

Each side is its own process with its own code (PYTHONPATH = that side's ``otel_agent``, bench/derive_ab.py's
``export_revision`` for a revision) and its own store, built by that side's fold and writer from the same
generator and seed (bench/genai_spans.py: traces of 6-10 spans, an ``invoke_agent`` root, ``chat`` calls with
usage, an ``execute_tool``, a few failures), so each store holds what that side's receiver would have stored. The
queries are the query-time views over the whole store (no maintained state: the stores are written by the writer
alone), each forced to compute every column (``sum(hash(row))``):

  * classify every span               SELECT sum(hash(c)) FROM classified_spans AS c
  * every run, computed from raw      SELECT sum(hash(r)) FROM runs_for_run(NULL) AS r
  * one run's rollup                  SELECT sum(hash(r)) FROM runs_for_run(?) AS r
  * provider health over all          SELECT sum(hash(h)) FROM provider_health AS h

The parent alternates the sides A B A B for ``--rounds`` rounds; in a round a side runs each query once as a
warm-up, then ``--repeat`` times, timed as process CPU (both DuckDB threads; less disturbed by other load than the
wall clock). Printed per query: the median over rounds of each side's median, the ratio now / baseline, and the
ratio within each round (the two sides back to back, sharing that minute's machine).

    python bench/fidelity_cost.py                                   # this checkout against ca10883
    python bench/fidelity_cost.py --against 9497c50 --spans 200000  # the Fidelity III branch's tip alone
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
TRACES_PER_REQUEST = 64
QUERIES = [
    ("classify every span", "SELECT count(*), sum(hash(c)) FROM classified_spans AS c", False),
    ("every run, computed from raw", "SELECT count(*), sum(hash(r)) FROM runs_for_run(NULL) AS r", False),
    ("one run's rollup", "SELECT count(*), sum(hash(r)) FROM runs_for_run(?) AS r", True),
    ("provider health over all", "SELECT count(*), sum(hash(h)) FROM provider_health AS h", False),
]


def build_store(path: str, n_spans: int, seed: int) -> None:
    """``n_spans`` (about) of bench/genai_spans.py's traces at ``path``, through the importable otel_agent's fold
    and writer, with requests in flight as a receiver has them."""
    import genai_spans

    from otel_agent.fold.decode import PROTOBUF, decode_payload
    from otel_agent.fold.redact import Redactor, load_rules
    from otel_agent.ingest.writer import Writer
    from otel_agent.store.database import open_store

    rnd = random.Random(seed)
    con = open_store(path)
    writer = Writer(con, max_inflight_bytes=1 << 62)
    redactor = Redactor(load_rules(None, use_defaults=True))
    start_ns, gap_ns = 1_790_000_000_000_000_000, 2_000_000_000
    inflight: deque = deque()
    written, request = 0, 0
    while written < n_spans:
        service = genai_spans.SERVICES[request % len(genai_spans.SERVICES)]
        payload = genai_spans.make_request(
            rnd, TRACES_PER_REQUEST, start_ns + request * TRACES_PER_REQUEST * gap_ns, gap_ns, service
        )
        batch = decode_payload("traces", PROTOBUF, payload, redactor, None, time.time_ns() // 1000)
        written += batch.items
        request += 1
        inflight.append(writer.submit(batch, writer.admit(batch.payload_bytes)))
        if len(inflight) >= 16:
            inflight.popleft().result()
    for future in inflight:
        future.result()
    writer.close()
    con.execute("CHECKPOINT").fetchall()
    con.close()


def cpu_ms(con, sql: str, params: list, repeat: int) -> tuple[float, list]:
    """Median process CPU ms of ``repeat`` runs after a warm-up, and the result."""
    cur = con.cursor()
    result = cur.execute(sql, params).fetchall()
    times = []
    for _ in range(repeat):
        c0 = time.process_time()
        cur.execute(sql, params).fetchall()
        times.append((time.process_time() - c0) * 1000)
    cur.close()
    return statistics.median(times), result


def worker(args: argparse.Namespace) -> None:
    """One side: build its store when missing, say which code it runs, then one round per stdin line."""
    import duckdb

    import otel_agent

    if not os.path.exists(args.db):
        build_store(args.db, args.spans, args.seed)
    from otel_agent.store.database import open_store

    open_store(args.db).close()  # this side's view definitions
    con = duckdb.connect(args.db, read_only=True, config={"threads": args.threads})
    spans = con.execute("SELECT count(*) FROM spans").fetchall()[0][0]
    traces = [r[0] for r in con.execute("SELECT DISTINCT trace_id FROM spans ORDER BY 1").fetchall()]
    run_id = traces[len(traces) // 2]
    print(json.dumps({"code": otel_agent.__file__, "spans": spans, "traces": len(traces), "run_id": run_id}))
    sys.stdout.flush()
    for line in sys.stdin:
        if line.strip() != "round":
            break
        out = []
        for _, sql, per_run in QUERIES:
            ms, result = cpu_ms(con, sql, [run_id] if per_run else [], args.repeat)
            out.append({"cpu_ms": ms, "rows": result[0][0]})
        print(json.dumps(out), flush=True)
    con.close()


def side_root(rev: str | None) -> Path:
    """The code root of ``rev`` (None: this checkout)."""
    if rev is None:
        return ROOT
    sys.path.insert(0, str(BENCH))
    from derive_ab import export_revision

    return export_revision(rev)


def compare(args: argparse.Namespace) -> None:
    """Parent: both workers (stores built one after the other), rounds A B A B, the ratios."""
    now_name = args.against or "now"
    sides = {args.baseline: side_root(args.baseline), now_name: side_root(args.against)}
    procs, ready = {}, {}
    for name, root in sides.items():
        db = f"{args.db}.{root.name if root != ROOT else 'now'}.{args.spans}.duckdb"
        cmd = [sys.executable, __file__, "--worker", str(root), "--db", db, "--spans", str(args.spans)]
        cmd += ["--seed", str(args.seed), "--threads", str(args.threads), "--repeat", str(args.repeat)]
        env = os.environ | {"PYTHONPATH": f"{root}{os.pathsep}{BENCH}"}
        procs[name] = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready[name] = json.loads(procs[name].stdout.readline())
        if not ready[name]["code"].startswith(str(root)):
            raise SystemExit(f"{name}: imported {ready[name]['code']}, not the code under {root}")
    a, b = ready.values()
    if (a["spans"], a["traces"]) != (b["spans"], b["traces"]):
        raise SystemExit(f"the two stores differ: {a} vs {b}")
    rounds: dict[str, list[list[dict]]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, proc in procs.items():
            proc.stdin.write("round\n")
            proc.stdin.flush()
            rounds[name].append(json.loads(proc.stdout.readline()))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    load = os.getloadavg()
    base = args.baseline
    print(
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"{a['spans']:,} GenAI spans, {a['traces']:,} traces; threads={args.threads}; process CPU ms, median of "
        f"{args.rounds} rounds (A B A B), each the median of {args.repeat} after a warm-up"
    )
    print(f"{'query':<30} {base:>10} {now_name:>10} {'ratio':>6}   ratio within rounds   rows {base}/{now_name}")
    for i, (label, _, _) in enumerate(QUERIES):
        cb = statistics.median(r[i]["cpu_ms"] for r in rounds[base])
        cn = statistics.median(r[i]["cpu_ms"] for r in rounds[now_name])
        within = sorted(n[i]["cpu_ms"] / b[i]["cpu_ms"] for b, n in zip(rounds[base], rounds[now_name], strict=True))
        print(
            f"{label:<30} {cb:>10.1f} {cn:>10.1f} {cn / cb:>6.2f}   "
            f"{statistics.median(within):.2f} [{within[0]:.2f}–{within[-1]:.2f}]"
            f"{'':>8}{rounds[base][0][i]['rows']}/{rounds[now_name][0][i]['rows']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="ca10883", help="the revision measured against (default ca10883)")
    ap.add_argument("--against", metavar="REV", help="measure REV instead of this checkout")
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--db", default="/tmp/otel_agent_fidelity_cost", help="store path prefix (one file per side)")
    ap.add_argument("--worker", metavar="CODE_ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        sys.path.insert(0, args.worker)
        worker(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
