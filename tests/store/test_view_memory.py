"""The whole-store derived views stay inside a bounded memory_limit (they must spill, not hold every span).

The receiver's default ``memory_limit`` is 1 GB, and the console copies the whole ``runs`` view for its list page.
A plan that keeps every wide classified row in memory (``DISTINCT ON (trace_id, span_id) *`` in ``oa_classified``,
93039ab) ran out of that 1 GB on a 1 M-span store; the ``row_number()`` window it replaced spills its sort. Here
the same shape at 1/20 of the size: 50 k spans of ``bench/derive.py`` under 128 MB, where that plan ran out even
at 256 MB and the window needs under 128 MB (measured 2026-12-02 on DuckDB 2.0.1, 2 threads).
"""

from __future__ import annotations

import sys
from pathlib import Path

from otel_agent.store.database import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from derive import build_store


def test_the_runs_view_of_a_50k_span_store_is_read_whole_within_128_mb(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    run_ids = build_store(str(path), 50_000, seed=1)
    con = open_store(path, memory_limit="128MB")
    try:
        con.execute("SET threads = 2")  # memory per plan grows with threads: the CI machine's 2 cores, fixed here
        con.execute(f"SET temp_directory = '{tmp_path / 'spill'}'")
        rows = con.execute("SELECT run_id, span_count FROM runs ORDER BY run_id").fetchall()
    finally:
        con.close()
    assert [r[0] for r in rows] == sorted(run_ids)
    assert len(rows) == 500
    assert sum(r[1] for r in rows) == 50_000
