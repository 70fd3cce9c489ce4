"""Schema vs derived: product tables are versioned schema (a store written by main at schema 3 migrates to 4 and
keeps their rows), and the derived SQL's fingerprint makes every reader use this release's views, whether it opens
one file or several."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from otel_agent.read.reviews import write_trust
from otel_agent.store import statements
from otel_agent.store.database import (
    FINGERPRINT_KEY,
    META_TABLE,
    PRODUCT_TABLES,
    RAW_TABLES,
    SCHEMA_VERSION,
    derived_fingerprint,
    open_store,
    schema_tables,
)
from otel_agent.store.statements import DERIVED_FOLDERS, ddl
from tests.derived_evidence.scenario import record_research
from tests.derived_evidence.support import Store

FIXTURE = Path(__file__).parent / "fixtures" / "store_v3.duckdb.gz"
STALE = "a view of another release"


def sql(query: str, *dbs: Path) -> list[dict]:
    """Rows from the real command: ``otel-agent sql --format json`` (a new process, as a user runs it)."""
    args = [sys.executable, "-m", "otel_agent", "sql", query, "--format", "json"]
    for db in dbs:
        args += ["--db", str(db)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def meta(path: Path) -> dict[str, str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return dict(con.execute(f"SELECT key, value FROM {META_TABLE}").fetchall())
    finally:
        con.close()


def v3_store(tmp_path: Path) -> Path:
    path = tmp_path / "v3.duckdb"
    with gzip.open(FIXTURE, "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def table_rows(path: Path, table: str) -> list[tuple]:
    """The rows of ``table``, without the ``ingest_seq`` the migration to schema version 5 adds."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] != "ingest_seq"]
        listed = ", ".join(f'"{c}"' for c in columns)
        return sorted(con.execute(f"SELECT {listed} FROM {table}").fetchall(), key=repr)
    finally:
        con.close()


def test_the_schema_holds_the_raw_and_product_tables_and_derived_sql_no_data_table() -> None:
    assert schema_tables()[0] == META_TABLE
    assert set(schema_tables()) == {META_TABLE, *RAW_TABLES, *PRODUCT_TABLES}
    tables = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)
    derived_tables = {t for folder in DERIVED_FOLDERS for s in ddl(folder) for t in tables.findall(s.sql)}
    # price_table is rebuilt from prices.csv at every open (CREATE OR REPLACE): derived, not a product table
    assert derived_tables == {"price_table"}


def test_a_store_written_by_main_at_schema_3_migrates_and_keeps_its_rows(tmp_path: Path) -> None:
    path = v3_store(tmp_path)
    assert meta(path) == {"schema_version": "3"}
    # the product tables a schema-3 store has (the alert tables came with version 6, empty after the migration)
    before = {t: table_rows(path, t) for t in ("reviews", "trusted_writers", "spans", "lineage_keys")}
    assert len(before["reviews"]) == 1
    assert len(before["trusted_writers"]) == 1
    assert len(before["spans"]) > 40
    con = open_store(path)
    con.close()
    assert meta(path) == {"schema_version": SCHEMA_VERSION, FINGERPRINT_KEY: derived_fingerprint()}
    assert {t: table_rows(path, t) for t in before} == before
    assert [table_rows(path, t) for t in ("alert_events", "alert_deliveries")] == [[], []]
    status = sql("SELECT target_kind, status, decided_by FROM review_status", path)
    assert status == [{"target_kind": "claim", "status": "approved", "decided_by": "ana"}]


def test_a_schema_3_store_is_read_through_the_current_views_without_being_written(tmp_path: Path) -> None:
    path = v3_store(tmp_path)
    before = path.read_bytes()
    trust = sql("SELECT principal, service_name, trusted FROM writer_trust", path)
    assert trust == [{"principal": "crawler-bot", "service_name": "crawler", "trusted": True}]
    claims = "SELECT count(DISTINCT record_id) AS n FROM spans WHERE record_kind = 'claim'"
    assert sql("SELECT count(*) AS n FROM claims", path) == sql(claims, path) == [{"n": 5}]
    assert path.read_bytes() == before


def test_the_migration_creates_missing_product_tables_and_the_writer_uses_them(tmp_path: Path) -> None:
    """A schema-3 file without the product tables (the derived SQL made them; one never opened by it)."""
    path = v3_store(tmp_path)
    con = duckdb.connect(str(path))
    con.execute("DROP VIEW IF EXISTS writer_trust")
    con.execute("DROP TABLE trusted_writers")
    con.close()
    store = Store(path)
    now = dt.datetime(2026, 1, 3, tzinfo=dt.UTC)
    store.write(lambda c: write_trust(c, "bot", "crawler", True, "ana", now=now))
    assert store.rows("SELECT principal, trusted FROM writer_trust") == [("bot", True)]
    assert len(store.rows("SELECT * FROM reviews")) == 1
    store.close()


@pytest.fixture
def two_stores(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    store = Store(a)
    store.ingest_spans(record_research().spans)
    store.close()
    open_store(b).close()
    return a, b


def pretend_another_release_wrote(path: Path) -> None:
    """Replace one stored view (as an older or newer release would have it) and its fingerprint."""
    con = duckdb.connect(str(path))
    con.execute(f"CREATE OR REPLACE VIEW runs AS SELECT '{STALE}' AS run_id")
    con.execute(f"UPDATE {META_TABLE} SET value = 'sha256:another' WHERE key = ?", [FINGERPRINT_KEY])
    con.close()


def test_the_writer_records_the_fingerprint_and_a_matching_file_is_read_as_it_is(two_stores) -> None:
    a, _ = two_stores
    assert meta(a)[FINGERPRINT_KEY] == derived_fingerprint()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", derived_fingerprint())
    # one file of this release: read directly (its catalog is the file), no catalog of copies
    assert sql("SELECT current_database() AS db", a) == [{"db": "a"}]


def test_a_file_with_another_releases_views_is_read_through_the_current_ones(two_stores) -> None:
    a, b = two_stores
    expected = sql("SELECT run_id FROM runs ORDER BY run_id", a)
    assert expected
    assert STALE not in json.dumps(expected)
    pretend_another_release_wrote(a)
    before = a.read_bytes()
    stored = duckdb.connect(str(a), read_only=True)
    assert stored.execute("SELECT run_id FROM runs").fetchall() == [(STALE,)]  # what the file itself holds
    stored.close()
    assert sql("SELECT run_id FROM runs ORDER BY run_id", a) == expected  # --db a
    assert sql("SELECT run_id FROM runs ORDER BY run_id", a, b) == expected  # --db a --db b
    assert sql("SELECT run_id FROM runs ORDER BY run_id", b, a) == expected
    assert a.read_bytes() == before, "a read-only open never rewrites the file"
    open_store(a).close()  # a writer of this release re-applies its views and records their fingerprint
    assert meta(a)[FINGERPRINT_KEY] == derived_fingerprint()
    assert sql("SELECT current_database() AS db, count(*) AS n FROM runs", a) == [{"db": "a", "n": len(expected)}]


def test_a_writer_reopening_a_file_of_this_release_keeps_its_views_and_reloads_the_prices(tmp_path: Path) -> None:
    path = tmp_path / "current.duckdb"
    con = open_store(path)
    prices = con.execute("SELECT count(*) FROM price_table").fetchall()[0][0]
    assert prices > 0
    # Mark the stored view and empty the price table: a reopen that re-applied the derived SQL would undo the
    # mark, and a reopen that skipped the price load would leave the table empty.
    con.execute(f"CREATE OR REPLACE VIEW runs AS SELECT '{STALE}' AS run_id")
    con.execute("DELETE FROM price_table")
    con.close()
    con = open_store(path)
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [(STALE,)]
        assert con.execute("SELECT count(*) FROM price_table").fetchall()[0][0] == prices
    finally:
        con.close()
    assert meta(path)[FINGERPRINT_KEY] == derived_fingerprint()


def _fingerprint_of(package: Path) -> str:
    code = "from otel_agent.store.database import derived_fingerprint; print(derived_fingerprint())"
    env = {**os.environ, "PYTHONPATH": str(package)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=package, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_fingerprint_covers_every_derived_file_and_only_those(tmp_path: Path) -> None:
    store_pkg = Path(statements.__file__).resolve().parent
    package = tmp_path / "site"
    shutil.copytree(store_pkg.parent, package / "otel_agent", ignore=shutil.ignore_patterns("__pycache__"))
    here = _fingerprint_of(package)
    assert here == derived_fingerprint()
    copy = package / "otel_agent" / "store"
    seen = {here}
    for rel in ("views/evidence/010_reviews.sql", "views/runs/080_runs.sql", "prices/prices.csv"):
        target = copy / rel
        original = target.read_text()
        target.write_text(original + "\n-- one more comment\n" if rel.endswith(".sql") else original + "\n")
        changed = _fingerprint_of(package)
        assert changed not in seen, f"changing {rel} must change the fingerprint"
        seen.add(changed)
        target.write_text(original)
    (copy / "schema/080_reviews.sql").write_text((copy / "schema/080_reviews.sql").read_text() + "\n-- schema\n")
    assert _fingerprint_of(package) == here, "the schema is versioned, not fingerprinted"
