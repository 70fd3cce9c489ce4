"""The command-line options of the benchmarks that read the synthetic store bench/derive.py builds
(bench/derive.py, bench/console.py): where it is, how many spans it holds, whether to build it again, how many
timed repeats."""

from __future__ import annotations

import argparse

DEFAULT_DB = "/tmp/otel_agent_derive_1m.duckdb"


def add_store_options(ap: argparse.ArgumentParser) -> None:
    """--db, --spans, --rebuild and --repeat (a store is built when --rebuild is given or the file is missing)."""
    ap.add_argument("--db", default=DEFAULT_DB, help="the store file (built when missing)")
    ap.add_argument("--spans", type=int, default=1_000_000, help="spans in a store built now")
    ap.add_argument("--rebuild", action="store_true", help="build the store again even if the file exists")
    ap.add_argument("--repeat", type=int, default=5, help="timed repeats per query (the median is reported)")
