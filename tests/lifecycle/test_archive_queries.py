"""Reading commands over live ∪ archive: the CLI's --archive, deduplication against the live store, and time
filters that prune archive partitions (visible in EXPLAIN)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil

import duckdb
import pyarrow as pa
import pytest

from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.reading import open_with_archive
from otel_agent.lifecycle.tables import SPAN_CHILDREN
from tests.cli.conftest import invoke
from tests.lifecycle.archived_store import FIRST_WINDOW, build


@pytest.fixture(scope="module")
def archived(tmp_path_factory) -> tuple[str, str]:
    """6 hourly windows of 1,000 spans (21h..23h on 2026-01-01, 00h..02h on 2026-01-02), all archived."""
    return build(tmp_path_factory.mktemp("archived"), hours=6, per_hour=1000)


def test_a_time_filter_prunes_archive_partitions(archived) -> None:
    db, archive = archived
    con = open_with_archive([db], archive)
    every_day = con.execute("EXPLAIN SELECT count(*) FROM spans").fetchall()[0][1]
    assert every_day.count("READ_PARQUET") == 2, every_day  # one scan per date= partition
    q = "SELECT count(*) FROM spans WHERE end_time >= TIMESTAMP_NS '2026-01-02 01:00:00'"
    assert con.execute(q).fetchall() == [(2000,)]
    assert con.execute("EXPLAIN " + q).fetchall()[0][1].count("READ_PARQUET") == 1  # the other day is pruned
    plan = con.execute("EXPLAIN ANALYZE " + q).fetchall()[0][1]
    assert set(re.findall(r"signal=spans/date=([\d-]+)/", plan)) == {"2026-01-02"}, plan
    scanned = re.search(r"Row Groups Scanned: (\d+) / (\d+)", plan)  # and within the day, hours by statistics
    assert scanned, plan
    assert (int(scanned[1]), int(scanned[2])) == (2, 3), plan


def test_since_and_until_bound_the_days_read(archived, tmp_path) -> None:
    """A per-run view has no time column to prune by: ``?since=``/``?until=`` on the archive URI bound what is
    read to those days, span children included (by their spans' day); an unbounded reader still reads all."""
    db, archive = archived
    bounded_root = tmp_path / "archive"  # a copy with one span's event on each day (the fixture's stays as it was)
    shutil.copytree(archive, bounded_root)
    events = Archive(str(bounded_root))
    # the archive's columns: the store's own ingest_seq is not archived (lifecycle/retention.py)
    store = duckdb.connect(db, read_only=True)
    schema = store.sql("SELECT * EXCLUDE (ingest_seq) FROM span_events LIMIT 0").to_arrow_table().schema
    store.close()
    for start, span in ((FIRST_WINDOW, "0"), (FIRST_WINDOW + dt.timedelta(hours=4), "1")):
        row = {"trace_id": [hashlib.md5(span.encode()).hexdigest()], "span_id": [span], "event_index": [0],
               "time": [start], "name": [f"event of {start:%d}"], "attributes": ["{}"],
               "dropped_attributes_count": [0]}  # fmt: skip
        events.write_window(SPAN_CHILDREN[0], start, pa.table(row).cast(schema))
    day2 = open_with_archive([db], f"{bounded_root}?since=2026-01-02")
    try:
        assert day2.execute("SELECT count(*), min(end_time)::DATE FROM spans").fetchall() == [
            (3000, dt.date(2026, 1, 2))
        ]
        assert day2.execute("SELECT name FROM span_events").fetchall() == [("event of 02",)]
        assert day2.execute("EXPLAIN SELECT count(*) FROM spans").fetchall()[0][1].count("READ_PARQUET") == 1
    finally:
        day2.close()
    assert duckdb.sql(f"SELECT count(*) FROM '{bounded_root}/signal=span_events/**/*.parquet'").fetchall() == [(2,)]
    until = invoke("sql", "--db", db, "--archive", f"{archive}?until=2026-01-02", "--format", "json",
                   "SELECT count(*) AS n, max(end_time)::DATE::VARCHAR AS last FROM spans")  # fmt: skip
    assert json.loads(until.stdout) == [{"n": 3000, "last": "2026-01-01"}]


def test_sql_command_reads_live_and_archive(archived) -> None:  # runs last: it adds a live row
    db, archive = archived
    sql = "SELECT count(*) AS n, count(DISTINCT span_id) AS ids FROM spans"
    without = invoke("sql", "--db", db, "--format", "json", sql)
    with_archive = invoke("sql", "--db", db, "--archive", archive, "--format", "json", sql)
    assert json.loads(without.stdout) == [{"n": 0, "ids": 0}]
    assert json.loads(with_archive.stdout) == [{"n": 6000, "ids": 1000}]
    since = "SELECT count(*) AS n FROM spans WHERE end_time >= TIMESTAMP '2026-01-02 02:00:00'"
    listed = invoke("sql", "--db", db, "--archive", archive, "--format", "json", since)
    assert json.loads(listed.stdout) == [{"n": 1000}]
    # the option ends with its command: the next one reads the live store alone again
    assert json.loads(invoke("sql", "--db", db, "--format", "json", sql).stdout) == [{"n": 0, "ids": 0}]

    # A span both live and archived (re-delivered after retention deleted it) counts once, as stored live.
    con = duckdb.connect(db)
    con.execute(
        "INSERT INTO spans BY NAME SELECT * EXCLUDE (signal, date, hour) REPLACE ('live copy' AS name) "
        "FROM read_parquet(?, hive_partitioning = true) LIMIT 1",
        [f"{archive}/signal=spans/**/*.parquet"],
    )
    con.close()
    both = invoke("sql", "--db", db, "--archive", archive, "--format", "json",
                  "SELECT count(*) AS n, count(*) FILTER (name = 'live copy') AS live FROM spans")  # fmt: skip
    assert json.loads(both.stdout) == [{"n": 6000, "live": 1}]
