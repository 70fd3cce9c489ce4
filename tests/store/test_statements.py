"""The statement registry: every .sql file has a registered name, a stray or missing file fails (in a test and at
start-up), DDL runs in numeric-prefix order, and the TEMP tables passed between files match their contract."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agent.store import statements
from otel_agent.store.statements import (
    DDL_FOLDERS,
    QUERIES,
    TEMP_TABLES,
    StatementRegistryError,
    UnknownStatementError,
    build_registry,
    ddl,
    statement,
)

STORE = Path(statements.__file__).resolve().parent


def sql_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.sql")}


def copy_store_sql(dest: Path) -> Path:
    """The package's .sql files (and nothing else) under ``dest``, laid out as in otel_agent/store/."""
    for rel in sql_files(STORE):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STORE / rel, target)
    return dest


def test_every_sql_file_has_exactly_one_registered_name() -> None:
    reg = statements.registry()
    paths = [s.path for s in reg.by_name.values()]
    assert sorted(paths) == sorted(sql_files(STORE))
    assert len(set(paths)) == len(paths)
    for name, stmt in reg.by_name.items():
        assert stmt.sql == (STORE / stmt.path).read_text(encoding="utf-8"), name


def test_ddl_order_is_the_numeric_prefix() -> None:
    for folder in DDL_FOLDERS:
        files = [s.path.rsplit("/", 1)[1] for s in ddl(folder)]
        on_disk = sorted(p.name for p in (STORE / folder).glob("*.sql"))
        assert files == sorted(on_disk, key=lambda f: int(f.split("_", 1)[0])), folder
        assert not (STORE / folder / "manifest.txt").exists(), "the numeric prefix is the only order"


def test_names_drop_the_prefix_and_queries_keep_their_stem() -> None:
    assert statement("schema/spans") == (STORE / "schema/010_spans.sql").read_text(encoding="utf-8")
    assert statement("ingest/spans_insert_new") == (STORE / "ingest/spans_insert_new.sql").read_text(encoding="utf-8")
    assert [s.name for s in ddl("schema")][:3] == ["schema/meta", "schema/ingest_seq", "schema/spans"]
    with pytest.raises(UnknownStatementError, match="ingest/spans_insert_newer"):
        statement("ingest/spans_insert_newer")
    with pytest.raises(UnknownStatementError):
        ddl("ingest")  # a query folder is never applied as DDL


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda root: (root / "views/runs/stray.sql").write_text("SELECT 1;"), "NNN_name.sql"),
        (lambda root: (root / "ingest/spans_insert_older.sql").write_text("SELECT 1;"), "ingest/spans_insert_older"),
        (lambda root: (root / "loose.sql").write_text("SELECT 1;"), "otel_agent/store/loose.sql"),
        (lambda root: (root / "ingest/logs_duplicates.sql").unlink(), "'ingest/logs_duplicates' is registered"),
        (lambda root: (root / "views/runs/080_twin.sql").write_text("SELECT 1;"), "the same prefix"),
        (lambda root: (root / "views/runs/999_runs.sql").write_text("SELECT 1;"), "share a name"),
    ],
    ids=[
        "ddl-without-prefix",
        "unregistered-query",
        "file-outside-any-folder",
        "missing-file",
        "same-prefix",
        "same-name",
    ],
)
def test_a_file_the_registry_does_not_account_for_fails(tmp_path: Path, change, message: str) -> None:
    root = copy_store_sql(tmp_path / "store")
    build_registry(root)  # the copy as it is passes
    change(root)
    with pytest.raises(StatementRegistryError, match=re.escape(message)):
        build_registry(root)


def test_a_stray_file_stops_the_real_command_at_start_up(tmp_path: Path) -> None:
    """A copy of the package with one unregistered .sql file: `otel-agent sql` fails before touching the store."""
    pkg = tmp_path / "site"
    shutil.copytree(STORE.parent, pkg / "otel_agent", ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "otel_agent/store/views/evidence/forgotten.sql").write_text("CREATE VIEW forgotten AS SELECT 1;")
    db = tmp_path / "s.duckdb"
    env = {**os.environ, "PYTHONPATH": str(pkg)}
    code = "from otel_agent.store.database import open_store; open_store(__import__('sys').argv[1])"
    result = subprocess.run(
        [sys.executable, "-c", code, str(db)], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "StatementRegistryError" in result.stderr
    assert "otel_agent/store/views/evidence/forgotten.sql" in result.stderr
    assert not db.exists(), "the store is not created when the registry is broken"


def _header(sql: str) -> str:
    lines = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    return "\n".join(lines)


@pytest.mark.parametrize("table", sorted(TEMP_TABLES))
def test_temp_tables_between_files_follow_their_contract(table: str) -> None:
    producer, consumers = TEMP_TABLES[table]
    created = re.compile(rf"CREATE\s+(OR\s+REPLACE\s+)?TEMP(ORARY)?\s+TABLE\s+{table}\b", re.I)
    assert created.search(statement(producer)), f"{producer} does not create {table}"
    for name in consumers:
        body = statement(name)
        assert re.search(rf"\b{table}\b", body), f"{name} does not read {table}"
        assert not created.search(body), f"{name} creates {table}: only {producer} may"
    for name in (producer, *consumers):
        assert table in _header(statement(name)), f"{name}: its header comment must name {table}"
    users = {name for name, stmt in statements.registry().by_name.items() if re.search(rf"\b{table}\b", stmt.sql)}
    assert users == {producer, *consumers}, "a file uses the TEMP table without being in its contract"


def test_every_query_folder_is_registered_and_never_ddl() -> None:
    assert set(QUERIES).isdisjoint(DDL_FOLDERS)
    for folder, stems in QUERIES.items():
        on_disk = {p.stem for p in (STORE / folder).glob("*.sql")} if (STORE / folder).is_dir() else set()
        assert on_disk == set(stems), folder


def test_no_macro_parameter_is_named_like_a_raw_column() -> None:
    """Over live ∪ archive the raw tables are views, and DuckDB refuses to create a macro whose body reads a view
    with a column named like one of its parameters ("Conflicting column names"): the receiver with an archive
    would not start. `oa_record_spans(…, kind, …)` did exactly that after a kill -9 during archive."""
    from otel_agent.store.database import RAW_TABLES, open_store

    con = open_store(":memory:")
    try:
        raw_columns = {
            column: table for table in RAW_TABLES for (column, *_) in con.execute(f"DESCRIBE {table}").fetchall()
        }
        macros = con.execute(
            "SELECT function_name, parameters FROM duckdb_functions() "
            "WHERE function_type IN ('macro', 'table_macro') AND NOT internal"
        ).fetchall()
    finally:
        con.close()
    assert any(name == "oa_record_spans" for name, _ in macros)
    clashes = {(name, p, raw_columns[p]) for name, params in macros for p in params if p in raw_columns}
    assert clashes == set()
