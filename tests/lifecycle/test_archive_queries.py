"""Reading commands over live ∪ archive: the CLI's --archive, and time filters that skip archived data."""

from __future__ import annotations

import json
import re

from otel_agent.lifecycle.reading import open_with_archive
from tests.cli.conftest import invoke
from tests.lifecycle.archived_store import build


def test_sql_command_reads_live_and_archive(tmp_path) -> None:
    db, archive = build(tmp_path, hours=3, per_hour=1000)
    sql = "SELECT count(*) AS n, count(DISTINCT span_id) AS ids FROM spans"
    without = invoke("sql", "--db", db, "--format", "json", sql)
    with_archive = invoke("sql", "--db", db, "--archive", archive, "--format", "json", sql)
    assert json.loads(without.stdout) == [{"n": 0, "ids": 0}]
    assert json.loads(with_archive.stdout) == [{"n": 3000, "ids": 1000}]
    # a reading command through the shared option
    listed = invoke("sql", "--db", db, "--archive", archive, "--format", "json",
                    "SELECT count(*) AS n FROM spans WHERE end_time >= TIMESTAMP '2026-01-01 02:00:00'")  # fmt: skip
    assert json.loads(listed.stdout) == [{"n": 1000}]


def test_a_time_filter_skips_archived_row_groups_outside_it(tmp_path) -> None:
    db, archive = build(tmp_path)
    con = open_with_archive([db], archive)
    q = "SELECT count(*) FROM spans WHERE end_time >= TIMESTAMP_NS '2026-01-01 04:00:00'"
    assert con.execute(q).fetchall() == [(40_000,)]
    plan = "\n".join(r[1] for r in con.execute("EXPLAIN ANALYZE " + q).fetchall())
    assert "READ_PARQUET" in plan and "end_time >= '2026-01-01 04:00:00'" in plan  # pushed into the scan
    scanned = re.search(r"Row Groups Scanned: (\d+) / (\d+)", plan)
    assert scanned and (int(scanned[1]), int(scanned[2])) == (2, 6), plan
