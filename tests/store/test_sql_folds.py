"""The SQL rules written once and read by several statements (docs/structure.md): the re-delivery rule of the
content-keyed tables, and the one parameter list DuckDB makes the receipt macros repeat."""

from __future__ import annotations

import re
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest

from otel_agent.fold.logs import LOGS_SCHEMA
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA
from otel_agent.store.database import open_store
from otel_agent.store.statements import statement

BASE_NS = 1_764_000_000_000_000_000


def rows(schema: pa.Schema, keys: list[int]) -> pa.Table:
    n = len(keys)
    cols: dict[str, list] = {f.name: [None] * n for f in schema}
    cols["time"] = [BASE_NS + k for k in keys]
    cols["content_hash"] = [f"{k:032x}" for k in keys]
    if "body" in cols:
        cols["body"] = ['"hello"'] * n
    if "metric_name" in cols:
        cols["metric_name"], cols["type"] = ["m"] * n, ["gauge"] * n
    return pa.Table.from_pydict(cols, schema=schema)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = open_store(":memory:")
    yield con
    con.close()


@pytest.mark.parametrize(("table", "schema"), [("logs", LOGS_SCHEMA), ("metric_points", METRIC_POINTS_SCHEMA)])
def test_a_redelivered_batch_adds_only_what_is_new_once(con, table: str, schema: pa.Schema) -> None:
    con.register(f"incoming_{table}", rows(schema, [1, 2, 3]))
    con.execute(statement(f"ingest/{table}_insert_all"))
    con.unregister(f"incoming_{table}")
    # 2 and 3 are stored; 4 comes twice, 5 once; 3 twice
    con.register(f"incoming_{table}", rows(schema, [2, 3, 3, 4, 4, 5]))
    con.execute(statement(f"ingest/{table}_insert_new"))
    con.unregister(f"incoming_{table}")
    stored = con.execute(f"SELECT epoch_ns(time) - {BASE_NS}, content_hash FROM {table} ORDER BY 1").fetchall()
    assert stored == [(k, f"{k:032x}") for k in (1, 2, 3, 4, 5)]


def _windows(sql: str, macro: str) -> list[str]:
    found = re.search(rf"CREATE OR REPLACE MACRO {macro}\((.*?)\) AS TABLE", sql, re.S)
    assert found, macro
    return [" ".join(p.split()) for p in found.group(1).split(",")]


def test_the_receipt_macros_take_the_same_windows_with_the_same_defaults() -> None:
    """receipt_state_at passes each window on to receipt_attempts_at; DuckDB cannot share a parameter list, so
    the two public signatures (docs/views-evidence.md) are written twice: they must not drift apart."""
    sql = statement("views/evidence/receipts")
    attempts = _windows(sql, "receipt_attempts_at")
    assert attempts == _windows(sql, "receipt_state_at")
    assert attempts[0] == "as_of"
    assert len(attempts) == 5
    assert all(":= INTERVAL" in p for p in attempts[1:])
