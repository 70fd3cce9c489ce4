"""Every DDL file runs, one by one and named when it fails, on an empty store and on a populated one; every view it
creates returns its rows; every query statement binds (the ingest ones run over empty input, the others are
prepared, never executed as DDL)."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from otel_agent.fold.documents import PARSED_DOCUMENTS_SCHEMA
from otel_agent.fold.lineage import LINEAGE_KEYS_SCHEMA
from otel_agent.fold.logs import LOGS_SCHEMA
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA
from otel_agent.read.reviews import write_review, write_trust
from otel_agent.store.database import open_store, store_cursor
from otel_agent.store.prices import load_prices
from otel_agent.store.statements import DDL_FOLDERS, Statement, ddl, queries, statement
from tests.derived_evidence.scenario import record_research
from tests.derived_evidence.support import Store

ALL_DDL = [s for folder in DDL_FOLDERS for s in ddl(folder)]
INCOMING = {  # the Arrow tables the writer registers for the ingest statements
    "incoming_spans": SPANS_SCHEMA,
    "incoming_span_events": SPAN_EVENTS_SCHEMA,
    "incoming_span_links": SPAN_LINKS_SCHEMA,
    "incoming_logs": LOGS_SCHEMA,
    "incoming_metric_points": METRIC_POINTS_SCHEMA,
    "incoming_lineage_keys": LINEAGE_KEYS_SCHEMA,
    "incoming_parsed_retrieval_documents": PARSED_DOCUMENTS_SCHEMA,
}


_CREATE_VIEW = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)", re.I)
_CREATE_TEMP = re.compile(r"(?:\s*--[^\n]*\n)*\s*CREATE\s+(?:OR\s+REPLACE\s+)?TEMP", re.I)


def views_of(stmt: Statement) -> list[str]:
    return _CREATE_VIEW.findall(stmt.sql)


def run_every_ddl_file(cur: duckdb.DuckDBPyConnection, statements: list[Statement]) -> dict[str, Statement]:
    """Execute each DDL file in order; returns view name → the file that creates it. Fails naming the file."""
    created: dict[str, Statement] = {}
    for stmt in statements:
        try:
            cur.execute(stmt.sql)
        except duckdb.Error as exc:
            pytest.fail(f"otel_agent/store/{stmt.path} fails: {exc}")
        created.update(dict.fromkeys(views_of(stmt), stmt))
        if stmt.name == "views/runs/price_table":
            load_prices(cur)
    in_store = {r[0] for r in cur.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert set(created) == in_store, "a view is made some other way than a CREATE VIEW the files declare"
    return created


def read_every_view(cur: duckdb.DuckDBPyConnection, created: dict[str, Statement]) -> dict[str, int]:
    rows: dict[str, int] = {}
    for view, stmt in sorted(created.items()):
        try:
            rows[view] = len(cur.execute(f'SELECT * FROM "{view}"').fetchall())
        except duckdb.Error as exc:
            pytest.fail(f"view {view} (otel_agent/store/{stmt.path}) fails when read: {exc}")
    return rows


SHARED_TEMP = ("console/runs_filter",)
"""Scripts whose TEMP objects the queries after them read on the same cursor."""


def run_every_query(cur: duckdb.DuckDBPyConnection, statements: tuple[Statement, ...] | None = None) -> list[str]:
    """Ingest statements run over empty incoming tables in a rolled-back transaction (a TEMP table one creates is
    there for the next, as in a commit); a page's scope script (CREATE TEMP …, console/*_scope) is run on a cursor
    of its own (its temp macros stand for views only on the page that runs it, so they must not leak into the
    statements checked after it); the runs page's filter macro (``SHARED_TEMP``: a TEMP macro of the cursor the
    page's queries run on, registered before the queries reading it) is run in the rolled-back transaction; other
    query statements are prepared (bound, not run)."""
    done = []
    scope_cursors: dict[str, duckdb.DuckDBPyConnection] = {}
    opened = contextlib.ExitStack()
    for name, schema in INCOMING.items():
        cur.register(name, schema.empty_table())
    cur.execute("BEGIN")
    try:
        for stmt in queries() if statements is None else statements:
            if stmt.name.startswith("maintenance/"):  # the maintained state's scripts: run whole, rolled back
                if "maintained" not in scope_cursors:
                    scope_cursors["maintained"] = opened.enter_context(maintained_cursor(cur))
                try:  # each over the state's tables (drop_state drops them)
                    scope_cursors["maintained"].execute(statement("maintenance/state"))
                    scope_cursors["maintained"].execute(maintained_script(stmt.name, scope_cursors["maintained"]))
                except duckdb.Error as exc:
                    pytest.fail(f"query {stmt.name} (otel_agent/store/{stmt.path}) fails: {exc}")
                done.append(stmt.name)
                continue
            for part in cur.extract_statements(stmt.sql):
                try:
                    if (
                        stmt.name.startswith("ingest/")
                        or stmt.name in SHARED_TEMP
                        or (part.type == duckdb.StatementType.CREATE and not _CREATE_TEMP.match(part.query))
                    ):
                        cur.execute(part.query).fetchall()
                    elif part.type == duckdb.StatementType.CREATE:  # a page's scope script: temp macros/tables
                        if stmt.name not in scope_cursors:
                            scope_cursors[stmt.name] = opened.enter_context(store_cursor(cur))
                        scoped = scope_cursors[stmt.name]
                        scoped.execute(part.query)
                    else:
                        cur.execute(f"PREPARE oa_check AS {part.query}")
                        cur.execute("DEALLOCATE oa_check")
                except duckdb.Error as exc:
                    pytest.fail(f"query {stmt.name} (otel_agent/store/{stmt.path}) fails: {exc}")
            done.append(stmt.name)
    finally:
        cur.execute("ROLLBACK")
        opened.close()
        for name in INCOMING:
            cur.unregister(name)
    return done


@contextlib.contextmanager
def maintained_cursor(cur: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of its own (the scripts shadow the raw tables with TEMP tables) in a transaction rolled back at
    the end, with the variables the scripts read, the TEMP tables store/maintained.py makes between them, and
    retention's empty ``lc_keys``."""
    with store_cursor(cur) as mcur:
        mcur.execute("BEGIN")
        try:
            for name in ("oa_lo", "oa_hi", "oa_lo_rowid", "oa_hi_rowid"):  # what the scripts read
                mcur.execute(f"SET VARIABLE {name} = 0")
            # what store/maintained.py makes between the scripts
            mcur.execute("CREATE TEMP TABLE _m_scope_traces (h UBIGINT, trace_id VARCHAR)")
            mcur.execute("CREATE TEMP TABLE _m_runs_touched (run_h UBIGINT, run_id VARCHAR)")
            keys = pa.table({"lc_rowid": pa.array([], pa.int64()), "trace_id": pa.array([], pa.string())})
            mcur.register("lc_keys", keys)
            yield mcur
        finally:
            mcur.execute("ROLLBACK")


def maintained_script(name: str, cur: duckdb.DuckDBPyConnection) -> str:
    catalog = cur.execute("SELECT current_database()").fetchall()[0][0]
    return statement(name).replace("oa_store.", f'"{catalog}".main.')


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store written by the receiver's fold and writer: the research scenario, a review and a trust grant."""
    path = tmp_path_factory.mktemp("populated") / "s.duckdb"
    store = Store(path)
    store.ingest_spans(record_research().spans)
    claim = store.rows("SELECT claim_id FROM claims ORDER BY claim_id LIMIT 1")[0][0]
    now = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    store.write(lambda con: write_review(con, "claim", claim, "approve", "ana", "ok", now=now))
    store.write(lambda con: write_trust(con, "bot", "crawler", True, "ana", now=now))
    store.close()
    return path


def test_every_ddl_file_runs_on_an_empty_store() -> None:
    con = duckdb.connect(":memory:")
    try:
        created = run_every_ddl_file(con, ALL_DDL)
        rows = read_every_view(con, created)
        assert len(created) >= 30, sorted(created)
        assert rows["runs"] == 0
        assert rows["claims"] == 0
        assert len(run_every_query(con)) == len(queries())
    finally:
        con.close()


def test_every_ddl_file_runs_again_on_a_populated_store(populated: Path) -> None:
    con = open_store(populated)
    try:
        with store_cursor(con) as cur:
            counts = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ("spans", "reviews")}
            assert counts["spans"] > 40
            assert counts["reviews"] == 1
            created = run_every_ddl_file(cur, ALL_DDL)  # CREATE OR REPLACE / IF NOT EXISTS over the stored objects
            rows = read_every_view(cur, created)
            assert rows["claims"] > 0
            assert rows["review_status"] == 1
            assert rows["writer_trust"] == 1
            assert {t: cur.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in counts} == counts
            assert len(run_every_query(cur)) == len(queries())
    finally:
        con.close()


def test_a_failing_file_is_named() -> None:
    """The runner above names the file: a broken copy of one view file fails with its path."""
    broken = Statement(
        "views/runs/runs", "views/runs/080_runs.sql", "CREATE OR REPLACE VIEW runs AS SELECT nope", "ddl"
    )
    con = duckdb.connect(":memory:")
    try:
        with pytest.raises(pytest.fail.Exception, match=r"otel_agent/store/views/runs/080_runs\.sql fails"):
            run_every_ddl_file(con, [*ddl("views/runs")[:1], broken])
    finally:
        con.close()


def test_a_view_that_binds_but_fails_when_read_is_named() -> None:
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE VIEW bad AS SELECT CAST('x' AS INTEGER) AS n FROM range(1)")
        stmt = Statement("views/runs/bad", "views/runs/999_bad.sql", "", "ddl")
        with pytest.raises(pytest.fail.Exception, match=r"view bad \(otel_agent/store/views/runs/999_bad\.sql\)"):
            read_every_view(con, {"bad": stmt})
    finally:
        con.close()


def test_an_incoming_table_is_what_the_writer_registers() -> None:
    """The ingest statements read exactly the incoming_* tables listed here (the writer's contract)."""
    used = set()
    for stmt in queries():
        if stmt.name.startswith("ingest/"):
            used |= {w for w in INCOMING if w in stmt.sql}
    assert used == set(INCOMING)
    assert all(isinstance(schema, pa.Schema) for schema in INCOMING.values())


def test_a_parameterised_query_is_prepared_not_run_and_a_broken_one_is_named() -> None:
    """A registered query that takes parameters is bound by PREPARE, not executed (the read layer's named queries,
    read/sql/, are checked the same way by tests/read)."""
    con = duckdb.connect(":memory:")
    try:
        run_every_ddl_file(con, ALL_DDL)
        good = Statement(
            "console/run", "console/run.sql", "SELECT * FROM runs WHERE run_id = $run_id LIMIT $n", "query"
        )
        assert run_every_query(con, (good,)) == ["console/run"]
        bad = Statement("console/bad", "console/bad.sql", "SELECT no_such_column FROM runs WHERE run_id = ?", "query")
        with pytest.raises(pytest.fail.Exception, match=r"query console/bad \(otel_agent/store/console/bad\.sql\)"):
            run_every_query(con, (bad,))
    finally:
        con.close()
