"""What the console's live pages cost (issue 36; docs/console.md "Live pages"): each open runs page asks for
``/?fragment=live`` every 5 s, and a running run's page for its runs-list row by id (``/?run=RUN&fragment=live``)
and, when that changed, for the run page. Times, over loopback HTTP against ``otel-agent serve`` on a copy of
bench/derive.py's store (built once) with one alert rule keyed by run id (so the marks are read), the median and
max of --repeat requests after a warm-up, with the receiver's CPU per request:

  * cached: the same URL again (an idle store: the console's result cache answers the runs rows; the marks are
    read every time)
  * uncached: a URL of its own each time (``limit`` one more: what an update costs while spans arrive)

    python bench/console_live.py                     # builds /tmp/otel_agent_live_100k.duckdb if missing
    python bench/console_live.py --spans 1000000 --db /tmp/otel_agent_derive_1m.duckdb
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import derive
import ingest
from console import time_get

RULES = """
[[rule]]
name = "long_runs"
kind = "sql"
query = "SELECT run_id AS key FROM runs WHERE duration_ms > 1e12"
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--db", default="/tmp/otel_agent_live_100k.duckdb")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.exists(args.db):
        print(f"building {args.db} ({args.spans:,} spans)…", file=sys.stderr)
        derive.build_store(args.db, args.spans, 7)
    con = duckdb.connect(args.db, read_only=True)
    n_spans = con.execute("SELECT count(*) FROM spans").fetchone()[0]
    run = con.execute("SELECT run_id FROM spans WHERE run_id IS NOT NULL ORDER BY start_time DESC LIMIT 1").fetchone()[
        0
    ]
    con.close()
    print(f"store: {n_spans:,} spans; load average {os.getloadavg()}")
    tmp = tempfile.mkdtemp(prefix="console_live_bench_")
    try:
        copy = os.path.join(tmp, "live.duckdb")
        shutil.copy(args.db, copy)
        rules = os.path.join(tmp, "rules.toml")
        Path(rules).write_text(RULES)
        receiver = ingest.ReceiverProcess(copy, ["--alert-rules", rules, "--alert-interval-s", "15"])
        base = f"http://127.0.0.1:{receiver.http_port}"
        try:
            pages = {
                "runs page      GET /": lambda i, u: f"/?limit={50 + i}" if u else "/",
                "live update    GET /?fragment=live": lambda i, u: (
                    f"/?fragment=live&limit={50 + i}" if u else "/?fragment=live"
                ),
                "run's row      GET /?run=RUN&fragment=live": lambda i, u: (
                    f"/?run={run}&fragment=live&limit={50 + i if u else 50}"
                ),
                "run page       GET /runs/RUN": lambda i, u: f"/runs/{run}" + (f"?limit={500 + i}" if u else ""),
            }
            for n in range(2):  # the first pass warms the store's caches and the maintained state up: not printed
                if n:
                    print(f"{'page':44} {'cache':9} {'median ms':>10} {'max ms':>8} {'bytes':>8} {'CPU ms/req':>11}")
                for label, url in pages.items():
                    for uncached in (False, True):
                        med, mx, size, cpu = time_get(
                            lambda i, url=url, u=uncached: base + url(i, u), args.repeat, receiver.proc.pid
                        )
                        kind = "uncached" if uncached else "cached"
                        if n:
                            print(f"{label:44} {kind:9} {med:10.1f} {mx:8.1f} {size:8d} {cpu:11.1f}")
        finally:
            receiver.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
