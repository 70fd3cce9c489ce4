"""Retention's delete steps on a real store file: their size follows the time budget, span children are deleted
through a rowid range that DuckDB prunes to the batch's row groups, and a batch that misses rows is planned again.

The step sizes are driven by the budget, not by this machine's speed: a budget no step can meet (0 ms) halves the
batch down to its floor, one every step meets (an hour) doubles it, so the recorded steps prove the rule without
asserting on timings.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from otel_agent.lifecycle.retention import MIN_BATCH, Lifecycle, _delete_sql
from otel_agent.lifecycle.tables import BY_TABLE
from otel_agent.store.database import open_store

SPANS_PER_HOUR = 3_000
HOURS = 3
EVENTS_PER_SPAN = 2


def _fill(con: duckdb.DuckDBPyConnection, start: dt.datetime, hours: int = HOURS) -> None:
    """``hours`` hourly windows of spans, each with two events: spans ordered by time as the writer appends them."""
    n = SPANS_PER_HOUR * hours
    step_us = 3_600_000_000 // SPANS_PER_HOUR
    con.execute(
        "INSERT INTO spans (trace_id, span_id, name, start_time, end_time) "
        "SELECT md5(i::VARCHAR), lpad(i::VARCHAR, 16, '0'), 's' || i, "
        f"$t + to_microseconds(i * {step_us}), $t + to_microseconds(i * {step_us} + 10) FROM range({n}) r(i)",
        {"t": start},
    )
    con.execute(
        "INSERT INTO span_events (trace_id, span_id, event_index, name) "
        "SELECT md5(i::VARCHAR), lpad(i::VARCHAR, 16, '0'), e, 'ev' "
        f"FROM range({n}) r(i), range({EVENTS_PER_SPAN}) x(e)"
    )


def _drain(life: Lifecycle, con: duckdb.DuckDBPyConnection) -> None:
    while life.plan_once():
        while life.step(con):
            pass
    life.step(con)  # the closing checkpoint


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory) -> Path:
    """A store file with the schema (opening one with its views costs seconds: done once, copied per test)."""
    path = tmp_path_factory.mktemp("steps") / "empty.duckdb"
    open_store(str(path)).close()
    return path


@pytest.fixture
def store(empty_store, tmp_path) -> duckdb.DuckDBPyConnection:
    shutil.copy(empty_store, tmp_path / "steps.duckdb")
    con = duckdb.connect(str(tmp_path / "steps.duckdb"))
    _fill(con, dt.datetime(2026, 1, 5, 0, 0))
    yield con
    con.close()


def test_steps_shrink_to_the_floor_when_over_budget(store) -> None:
    life = Lifecycle(store, retention_s=0, batch_rows=2_048, target_step_ms=0.0)
    _drain(life, store)
    sizes = [s.rows for s in life.stats.recent_steps]
    assert sizes[:4] == [2_048, 1_024, 512, 256]  # halved after every step over budget
    assert max(sizes[4:]) == MIN_BATCH  # then held at the floor (windows' tails are shorter)
    assert life.report()["delete_batch_rows"] == MIN_BATCH
    assert store.execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
    assert store.execute("SELECT count(*) FROM span_events").fetchall() == [(0,)]
    assert life.stats.rows_deleted == {"spans": SPANS_PER_HOUR * HOURS, "span_events": 2 * SPANS_PER_HOUR * HOURS}
    assert life.stats.checkpoints == 1  # one after the backlog, not one per window


def test_steps_grow_when_under_budget_and_children_go_first(store) -> None:
    life = Lifecycle(store, retention_s=0, batch_rows=MIN_BATCH, target_step_ms=3_600_000.0)
    _drain(life, store)
    steps = list(life.stats.recent_steps)
    # the first window: its 6,000 events, then its 3,000 spans, in doubling steps (one step may take the end of
    # one table's window and the start of the next, in one transaction)
    events, both = ("span_events",), ("span_events", "spans")
    assert [(s.tables, s.rows) for s in steps[:6]] == [
        (events, 256), (events, 512), (events, 1_024), (events, 2_048), (both, 4_096), (("spans",), 1_064),
    ]  # fmt: skip
    report = life.report()
    assert report["delete_steps"] == len(steps)
    assert report["max_delete_step_ms"] == round(max(s.ms for s in steps), 2)
    assert report["delete_batch_rows"] > 4_096
    assert store.execute("SELECT count(*) FROM span_events").fetchall() == [(0,)]


def test_child_delete_reads_only_the_row_groups_of_its_batch(empty_store, tmp_path) -> None:
    shutil.copy(empty_store, tmp_path / "wide.duckdb")
    con = duckdb.connect(str(tmp_path / "wide.duckdb"))
    _fill(con, dt.datetime(2026, 1, 5, 0, 0), hours=50)  # 300,000 events in many row groups
    con.execute("CHECKPOINT")
    part = con.sql(
        "SELECT rowid AS lc_rowid, trace_id, span_id, event_index FROM span_events "
        "ORDER BY rowid LIMIT 500 OFFSET 150000"
    ).to_arrow_table()
    con.register("lc_keys", part)
    con.execute("BEGIN")
    plan = con.execute("EXPLAIN ANALYZE " + _delete_sql(BY_TABLE["span_events"], part)).fetchall()[0][1]
    con.execute("ROLLBACK")
    con.close()
    scanned = re.search(r"Table: \S*span_events.*?Row Groups Scanned: (\d+) / (\d+)", plan, re.S)
    assert scanned is not None, plan
    assert int(scanned[1]) == 1, plan  # by key alone: every row group
    assert int(scanned[2]) >= 3, plan


def test_a_batch_that_misses_rows_is_planned_again(store) -> None:
    life = Lifecycle(store, retention_s=0, batch_rows=MIN_BATCH, target_step_ms=3_600_000.0)
    assert life.plan_once()
    store.execute("DELETE FROM span_events WHERE name = 'ev' AND event_index = 1 AND span_id = lpad('3', 16, '0')")
    while life.step(store):
        pass
    assert life.report()["delete_replans"] == 1
    assert life.report()["rows_pending_delete"] == 0
    _drain(life, store)
    assert store.execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
    assert store.execute("SELECT count(*) FROM span_events").fetchall() == [(0,)]
