"""Retention and archive figures (docs/engineering/lifecycle-figures.md; the design: docs/scale.md, "Lifecycle"):
archive write throughput, Parquet bytes per span, delete step cost, and derived-query time over the live store vs
over live ∪ archive.

    nice python bench/lifecycle.py --spans 200000
    nice python bench/lifecycle.py --spans 10000000 --build-parts 2 --runs 1 --repeat 1 --archive-only

Builds a store with bench/derive.py's generator (runs spread over 30 days), copies it, then archives and deletes
every window of the copy through the receiver's own Lifecycle (plan on a cursor, delete steps on the connection)
and times bench/derive.py's queries on the original and on the emptied copy read with its archive, then the
per-run ones with the archive read bounded to the run's days (``?since=…&until=…``).

Large sizes: ``--build-parts N`` builds the store in N processes (disjoint run ranges, each through the fold and
the writer) and merges them; ``--archive-only`` archives every window in place without deleting it (no copy, no
delete steps: the archive write and its planning alone) and reads an empty live store with the archive, which
holds the same rows as the emptied copy. Progress goes to stderr as it runs, so a cut run still shows its rate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(con, sql: str, params: list, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        con.execute(sql, params).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def same(a: list[tuple], b: list[tuple]) -> bool:
    """Equal rows, floats to 9 significant digits (sums over live ∪ archive may add in another order)."""

    def canon(rows: list[tuple]) -> list[str]:
        return sorted(repr(tuple(f"{v:.9g}" if isinstance(v, float) else v for v in r)) for r in rows)

    return canon(a) == canon(b)


def build_part(path: str, n_spans: int, part: int, parts: int, seed: int) -> None:
    """Runs ``[part * n / parts, (part + 1) * n / parts)`` of bench/derive.py's store of ``n_spans`` (the same
    times and run numbering), through the receiver's fold and writer, into ``path``; its own random stream."""
    from bench.derive import SPANS_PER_RUN, build_store

    n_runs = max(1, n_spans // SPANS_PER_RUN)
    runs = (part * n_runs // parts, (part + 1) * n_runs // parts)
    build_store(path, n_spans, seed * 1000 + part, runs=runs, label=f"part {part}: ")


def build_in_parts(path: str, n_spans: int, parts: int, seed: int) -> None:
    """bench/derive.py's store built by ``parts`` processes at once (disjoint run ranges, each through the fold
    and the writer), then merged into one file table by table (rows as the writers wrote them)."""
    import multiprocessing

    import duckdb

    files = [f"{path}.part{i}" for i in range(parts)]
    for f in (path, *files):
        for suffix in ("", ".wal"):
            Path(f + suffix).unlink(missing_ok=True)
    procs = [multiprocessing.Process(target=build_part, args=(f, n_spans, i, parts, seed)) for i, f in enumerate(files)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    shutil.move(files[0], path)
    con = duckdb.connect(path)
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = "
                                        "current_database() AND table_name NOT IN ('otel_agent_meta', 'price_table')")
              .fetchall()]  # fmt: skip
    for i, f in enumerate(files[1:], 1):
        con.execute(f"ATTACH '{f}' AS part{i} (READ_ONLY)")
        for t in tables:
            con.execute(f"INSERT INTO {t} SELECT * FROM part{i}.{t}")
        con.execute(f"DETACH part{i}")
        Path(f).unlink()
    con.execute("CHECKPOINT")
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each query (median)")
    ap.add_argument("--runs", type=int, default=3, help="archive runs, each on a fresh copy (median)")
    ap.add_argument("--build-parts", type=int, default=1, help="build the store in this many processes at once")
    ap.add_argument("--store", help="a store bench/derive.py built earlier (copied), instead of building one")
    ap.add_argument("--queries-only", metavar="DIR", help="time the queries of an earlier run kept with --keep")
    ap.add_argument("--keep", action="store_true", help="keep the stores and the archive (printed path)")
    ap.add_argument(
        "--archive-only",
        action="store_true",
        help="archive every window without deleting it (no copy, no delete steps); the queries then read an empty "
        "live store with the archive (the same rows as the emptied copy: what a 10 M run can afford here)",
    )
    args = ap.parse_args()

    import duckdb

    from bench.derive import build_store
    from otel_agent.lifecycle.archive import Archive
    from otel_agent.lifecycle.reading import open_with_archive
    from otel_agent.lifecycle.retention import Lifecycle
    from otel_agent.store.database import open_store

    work = Path(args.queries_only or tempfile.mkdtemp(prefix="otel_agent_lifecycle_"))
    whole, lean, archive_dir = str(work / "whole.duckdb"), str(work / "lean.duckdb"), str(work / "archive")
    print(f"work: {work}", file=sys.stderr, flush=True)
    if not args.queries_only:
        if args.store:
            shutil.copy(args.store, whole)
        elif args.build_parts > 1:
            t0 = time.perf_counter()
            build_in_parts(whole, args.spans, args.build_parts, seed=7)
            print(f"built in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        else:
            build_store(whole, args.spans, seed=7)
        runs = []
        for _ in range(args.runs):  # each on a fresh copy of the store and an empty archive
            shutil.rmtree(archive_dir, ignore_errors=True)
            if args.archive_only:  # archive the whole store in place; the live side of the reading is empty
                for suffix in ("", ".wal"):
                    Path(lean + suffix).unlink(missing_ok=True)
                open_store(lean).close()
                con = open_store(whole)
            else:
                shutil.copy(whole, lean)
                con = open_store(lean)
            n = con.execute("SELECT count(*) FROM spans").fetchall()[0][0]
            retention = None if args.archive_only else 0
            life = Lifecycle(con, retention_s=retention, archive=Archive(archive_dir), iceberg=None)
            t0, c0 = time.perf_counter(), time.process_time()
            logged = 0
            while life.plan_once():
                while life.step(con):
                    pass
                if life.stats.windows_archived >= logged + 50:  # progress, so a cut run still shows its rate
                    logged = life.stats.windows_archived
                    w, c = time.perf_counter() - t0, time.process_time() - c0
                    print(f"  {logged} windows, {life.stats.rows_archived:,} rows archived: {w:.0f} s wall, "
                          f"{c:.0f} s CPU; load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)  # fmt: skip
            life.step(con)  # the closing checkpoint
            runs.append((time.perf_counter() - t0, time.process_time() - c0, life.stats))
            con.close()
            print(f"  run: {runs[-1][0]:.1f} s wall, {runs[-1][1]:.1f} s CPU", file=sys.stderr)
        elapsed, cpu, s = sorted(runs, key=lambda r: r[0])[len(runs) // 2]  # the median run by wall time
        span_bytes = sum(os.path.getsize(p) for p in Path(archive_dir, "signal=spans").rglob("*.parquet"))
        all_bytes = sum(os.path.getsize(p) for p in Path(archive_dir).glob("signal=*/**/*.parquet"))
        files = len(list(Path(archive_dir).glob("signal=*/**/*.parquet")))
        print(f"store: {n:,} spans; {s.windows_archived:,} windows; {files:,} files; median of {len(runs)} runs")
        print(f"archive+delete+checkpoint of everything: {elapsed:.1f} s wall ({n / elapsed:,.0f} spans/s), "
              f"{cpu:.1f} s CPU ({n / cpu:,.0f} spans/CPU-s); archive part {s.archive_seconds:.1f} s "
              f"({n / s.archive_seconds:,.0f} spans/s)")  # fmt: skip
        hours = max(1, len({p.parent for p in Path(archive_dir, "signal=spans").rglob("*.parquet")}))
        print(f"per hourly window (all raw tables): {elapsed * 1000 / hours:.0f} ms wall, "
              f"archive {s.archive_seconds * 1000 / hours:.0f} ms; {n / hours:,.0f} spans per window")  # fmt: skip
        steps = [st.rows for st in s.recent_steps]
        print(f"delete steps: {s.delete_steps:,}, {s.delete_seconds * 1000 / max(1, s.delete_steps):.1f} ms mean, "
              f"{s.max_step_ms:.1f} ms max, last {len(steps)} steps {min(steps, default=0)}-{max(steps, default=0)} "
              f"rows; checkpoints {s.checkpoints} ({s.checkpoint_seconds:.2f} s); "
              f"all runs wall {[round(r[0], 1) for r in runs]} CPU {[round(r[1], 1) for r in runs]}")  # fmt: skip
        print(f"Parquet: spans {span_bytes / n:.1f} bytes/span; all raw tables {all_bytes / n:.1f} bytes/span; "
              f"live store {os.path.getsize(whole) / n:.1f} bytes/span")  # fmt: skip

    live = duckdb.connect(whole, read_only=True)
    both = open_with_archive([lean], archive_dir)
    run_id = live.execute("SELECT run_id FROM spans WHERE record_kind = 'flow_run' ORDER BY 1 LIMIT 1 OFFSET 10")
    run_id = run_id.fetchall()[0][0]
    day = live.execute("SELECT date_trunc('day', min(end_time)) + INTERVAL 10 DAY FROM spans").fetchall()[0][0]
    cases = [
        ("one run's rollup (runs_for_run)", "SELECT * FROM runs_for_run(?)", [run_id]),
        ("provider_health over all", "SELECT * FROM provider_health", []),
        ("cost_breakdown for one run", "SELECT * FROM cost_breakdown_for_run(?)", [run_id]),
        # literal bounds: the planner prunes archive days by constants (a subquery bound is known only at run time)
        ("spans of one day (time filter)", f"SELECT count(*) FROM spans WHERE end_time >= TIMESTAMP '{day}' "
         f"AND end_time < TIMESTAMP '{day}' + INTERVAL 1 DAY", []),
    ]  # fmt: skip
    print(f"\n{'query':40} {'live ms':>9} {'archive ms':>11}")
    for name, sql, params in cases:
        assert same(live.execute(sql, params).fetchall(), both.execute(sql, params).fetchall()), name
        print(f"{name:40} {timed(live, sql, params, args.repeat):9.1f} {timed(both, sql, params, args.repeat):11.1f}"
              f"  (load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    # The per-run queries with the archive read bounded to the run's days (``?since=…&until=…``): what a user
    # who knows when a run happened passes; the run's traces' days come from the live store here.
    lo, hi = live.execute(
        "SELECT min(end_time)::DATE, max(end_time)::DATE + 1 FROM spans WHERE trace_id IN "
        "(SELECT trace_id FROM spans WHERE run_id = ?)", [run_id]
    ).fetchall()[0]  # fmt: skip
    bounded = open_with_archive([lean], f"{archive_dir}?since={lo}&until={hi}")
    print(f"archive read bounded to [{lo}, {hi}):")
    for name, sql, params in (cases[0], cases[2]):
        assert same(live.execute(sql, params).fetchall(), bounded.execute(sql, params).fetchall()), name
        print(f"{name:40} {'':9} {timed(bounded, sql, params, args.repeat):11.1f}"
              f"  (load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip
    if args.keep or args.queries_only:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
