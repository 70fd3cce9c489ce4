"""A closed store whose spans all live in the archive: six hourly windows of generated spans."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.tables import SPANS
from otel_agent.store.database import open_store

FIRST_WINDOW = dt.datetime(2026, 1, 1, 21)


def build(root: Path, hours: int = 6, per_hour: int = 20_000) -> tuple[str, str]:
    """(store path, archive dir): spans from 2026-01-01 21h on (6 hours cross into 2026-01-02); every window
    archived, then deleted live."""
    db, archive_dir = str(root / "store.duckdb"), str(root / "archive")
    con = open_store(db)
    archive = Archive(archive_dir)
    for h in range(hours):
        start = FIRST_WINDOW + dt.timedelta(hours=h)
        con.execute(
            "INSERT INTO spans BY NAME SELECT md5(i::VARCHAR) AS trace_id, i::VARCHAR AS span_id, "
            "'generated' AS name, $s::TIMESTAMP_NS + to_seconds(i % 3600) AS end_time FROM range($n) t(i)",
            {"s": start, "n": per_hour},
        )
        window = con.sql(
            "SELECT * FROM spans WHERE end_time >= $s AND end_time < $s::TIMESTAMP + INTERVAL 1 HOUR",
            params={"s": start},
        ).to_arrow_table()
        archive.write_window(SPANS, start, window)
    con.execute("DELETE FROM spans")
    con.execute("CHECKPOINT")
    con.close()
    assert duckdb.connect(db, read_only=True).execute("SELECT count(*) FROM spans").fetchall() == [(0,)]
    return db, archive_dir
