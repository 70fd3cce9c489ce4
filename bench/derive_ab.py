"""bench/derive.py --baseline REV: the same queries on the code of REV and on this checkout, in one invocation.

Each side is its own process (PYTHONPATH = its code) with its own store, built by that side's fold and writer from
the same generator, seed and size (so the same contents in the schema that side writes). The parent alternates
the sides ABAB for --rounds rounds; in a round a side runs each query once as a warm-up, --repeat times timed
(process CPU time: both DuckDB threads, less disturbed by other load than wall-clock), PREPARE'd --repeat times
(the CPU of planning alone: bind, optimise, physical plan; execution is the rest), then once under DuckDB's JSON
profiler (its planner / optimizer / physical-planner split, wall-clock). Reported per query: the median over
rounds of each round's median, and the ratio this checkout / REV; with --paired N, also N ratios of the two
sides run back to back in one process (paired()), the steadier figure on a machine whose speed drifts.

The code of REV is `git archive REV otel_agent` unpacked under /tmp (no worktree: the repository is untouched).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_revision(rev: str) -> Path:
    """The otel_agent package of git revision ``rev`` unpacked into a cached folder; returns the folder."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], check=True, capture_output=True, text=True)
    dest = Path(tempfile.gettempdir()) / f"otel_agent_bench_{sha.stdout.strip()[:12]}"
    if not (dest / "otel_agent" / "__init__.py").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", sha.stdout.strip(), "otel_agent"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def profiled(con, sql: str, params: list, path: str) -> dict[str, float]:
    """One run under DuckDB's JSON profiler: planner / optimizer / physical planner / execution CPU (ms)."""
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"SET profiling_output = '{path}'")
    con.execute(sql, params).fetchall()
    con.execute("PRAGMA disable_profiling")
    with open(path) as f:
        prof = json.load(f)
    return {
        "plan_ms": prof["planner"]["total_time"] * 1000,
        "optimize_ms": prof["optimizer"]["total_time"] * 1000,
        "physical_ms": prof["physical_planner"]["total_time"] * 1000,
        "exec_cpu_ms": prof["query"]["cpu_time"] * 1000,
    }


def prepare_cpu(con, sql: str, params: list, repeat: int) -> float:
    """Median process CPU ms of PREPARE (bind, optimise, physical plan; no execution), the run id inlined."""
    literal = sql
    for value in params:
        literal = literal.replace("?", "'" + str(value).replace("'", "''") + "'", 1)
    times = []
    for _ in range(repeat + 1):
        c0 = time.process_time()
        con.execute("PREPARE oa_bench AS " + literal)
        times.append(time.process_time() - c0)
    con.execute("DEALLOCATE oa_bench")
    return statistics.median(times[1:]) * 1000


def serve(args: argparse.Namespace) -> None:
    """Worker: prepare this side's store, say which code and run it measures, then one round per stdin line."""
    import duckdb

    sys.path.insert(0, args.worker)
    import derive

    import otel_agent

    derive.prepare_store(args.db, args.spans, args.seed, args.rebuild)
    con = duckdb.connect(args.db, read_only=True)
    con.execute(f"SET threads = {int(args.threads)}").fetchall()
    n, n_runs, run_id = derive.middle_run(con)
    cases = [c for c in derive.bench_cases(run_id) if not args.only or args.only in c[1]]
    print(json.dumps({"code": otel_agent.__file__, "spans": n, "runs": n_runs, "run_id": run_id}), flush=True)
    prof_path = args.db + ".profile.json"
    for line in sys.stdin:
        if line.strip() != "round":
            break
        out = []
        for label, sql, params, _ in cases:
            ms, cpu, nrows = derive.timed(con, sql, params, args.repeat)
            row = {"label": label, "wall_ms": ms, "cpu_ms": cpu, "rows": nrows}
            row["prepare_cpu_ms"] = prepare_cpu(con, sql, params, args.repeat)
            out.append(row | profiled(con, sql, params, prof_path))
        print(json.dumps(out), flush=True)
    con.close()


def paired(dbs: dict[str, str], args: argparse.Namespace) -> None:
    """--paired N: both stores open in this process (each file holds its own side's view definitions, so one
    DuckDB runs either side's SQL), each query run on one side and at once on the other, the order alternating,
    N times; the median of the N ratios. Each ratio shares one moment of the machine, which the rounds above
    (seconds apart, one process per side) do not: on this machine a query's CPU drifts by ±20 % from one second
    to the next."""
    import derive  # bench/ is on the path: derive.py put it there and imported this module
    import duckdb

    cons = {name: duckdb.connect(db, read_only=True, config={"threads": args.threads}) for name, db in dbs.items()}
    _, _, run_id = derive.middle_run(cons["now"])
    cases = [c for c in derive.bench_cases(run_id) if not args.only or args.only in c[1]]
    base = next(name for name in dbs if name != "now")
    print(f"\npaired in one process ({args.paired} samples per query; CPU ms, median [quartiles] of now / {base}):")
    for label, sql, params, _ in cases:
        cpu: dict[str, list[float]] = {name: [] for name in cons}
        for con in cons.values():  # a warm-up on each side
            con.execute(sql, params).fetchall()
        for i in range(args.paired):
            for name in list(cons) if i % 2 == 0 else list(cons)[::-1]:
                cur = cons[name].cursor()
                c0 = time.process_time()
                cur.execute(sql, params).fetchall()
                cpu[name].append((time.process_time() - c0) * 1000)
                cur.close()
        ratios = sorted(n / b for n, b in zip(cpu["now"], cpu[base], strict=True))
        q = len(ratios) // 4
        print(
            f"  {label.strip():<38} {statistics.median(cpu[base]):8.1f} → {statistics.median(cpu['now']):<8.1f} "
            f"{statistics.median(ratios):.3f}  [{ratios[q]:.2f}–{ratios[-1 - q]:.2f}]"
        )
    for con in cons.values():
        con.close()


def _worker(code_root: Path, db: str, args: argparse.Namespace) -> subprocess.Popen:
    cmd = [sys.executable, str(Path(__file__).with_name("derive.py")), "--worker", str(code_root), "--db", db]
    cmd += ["--spans", str(args.spans), "--seed", str(args.seed), "--threads", str(args.threads)]
    cmd += ["--repeat", str(args.repeat)] + (["--rebuild"] if args.rebuild else [])
    cmd += ["--only", args.only] if args.only else []
    env = os.environ | {"PYTHONPATH": str(code_root)}
    return subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def compare(args: argparse.Namespace) -> None:
    """Parent: start both workers (their stores built one after the other), alternate rounds, print the ratios."""
    base_root = export_revision(args.baseline)
    sides = {args.baseline: (base_root, f"{args.db}.ab-{base_root.name[-12:]}.duckdb"), "now": (ROOT, args.db)}
    procs, ready = {}, {}
    for name, (root, db) in sides.items():  # one at a time: each build has the machine's cores
        procs[name] = _worker(root, db, args)
        ready[name] = json.loads(procs[name].stdout.readline())
        if not ready[name]["code"].startswith(str(root)):
            raise SystemExit(f"{name}: imported {ready[name]['code']}, not the code under {root}")
    a, b = ready.values()
    if (a["spans"], a["runs"], a["run_id"]) != (b["spans"], b["runs"], b["run_id"]):
        raise SystemExit(f"the two stores differ: {a} vs {b}")
    rounds: dict[str, list[list[dict]]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, proc in procs.items():  # A B A B …
            proc.stdin.write("round\n")
            proc.stdin.flush()
            rounds[name].append(json.loads(proc.stdout.readline()))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()

    def med(name: str, i: int, key: str) -> float:
        return statistics.median(r[i][key] for r in rounds[name])

    load = os.getloadavg()
    print(
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"{a['spans']:,} spans, {a['runs']:,} runs, run {a['run_id']}; threads={args.threads}; "
        f"median of {args.rounds} rounds (ABAB), each the median of {args.repeat} after a warm-up"
    )
    base = args.baseline
    print(
        f"{'query':<38} {'cpu ms ' + base:>15} {'now':>7} {'ratio':>6}   {'plan cpu (PREPARE)':>18} {'ratio':>6}"
        f"   {'exec cpu (rest)':>15}   {'DuckDB profile now: bind/optimise/physical ms':>46}  rows"
    )
    for i, res in enumerate(rounds[base][0]):
        cb, cn = med(base, i, "cpu_ms"), med("now", i, "cpu_ms")
        pb, pn = med(base, i, "prepare_cpu_ms"), med("now", i, "prepare_cpu_ms")
        prof = "/".join(f"{med('now', i, k):.1f}" for k in ("plan_ms", "optimize_ms", "physical_ms"))
        rows = f"{res['rows']}/{rounds['now'][0][i]['rows']}"
        print(
            f"{res['label'].strip():<38} {cb:>15.1f} {cn:>7.1f} {cn / cb:>6.2f}   "
            f"{pb:>8.1f} → {pn:<7.1f} {pn / max(pb, 0.1):>6.2f}"
            f"   {max(cb - pb, 0):>6.1f} → {max(cn - pn, 0):<6.1f}   {prof:>46}  {rows}"
        )
    walls = [med("now", i, "wall_ms") / med(base, i, "wall_ms") for i in range(len(rounds[base][0]))]
    print("wall-clock ratios (now / base): " + ", ".join(f"{w:.2f}" for w in walls))
    # a round's two sides run back to back, so the ratio within a round shares that minute's machine: the median of
    # those ratios, and their spread, say how far the CPU ratio above can be trusted on a noisy machine
    print("CPU ratio within each round (now / base): median [lowest–highest]")
    for i, res in enumerate(rounds[base][0]):
        pairs = zip(rounds[base], rounds["now"], strict=True)
        per_round = sorted(rn[i]["cpu_ms"] / rb[i]["cpu_ms"] for rb, rn in pairs)
        print(
            f"  {res['label'].strip():<38} {statistics.median(per_round):.2f}  "
            f"[{per_round[0]:.2f}–{per_round[-1]:.2f}]  " + " ".join(f"{r:.2f}" for r in per_round)
        )
    if args.paired:
        paired({name: db for name, (_, db) in sides.items()}, args)
