"""The one conversion of results to Python values (``readonly.rows_of``) gives what DuckDB's own ``fetchall``
gives, for every type, after the Arrow IPC round trip a live query takes."""

from __future__ import annotations

import duckdb
import pytest

from otel_agent.query.readonly import from_ipc, lock_down, rows_of, run_query, to_ipc

EXPRESSIONS = [
    "42",
    "9007199254740993::BIGINT",
    "170141183460469231731687303715884105727::HUGEINT",
    "340282366920938463463374607431768211455::UHUGEINT",
    "18446744073709551615::UBIGINT",
    "sum(x) FROM (SELECT 10::BIGINT x)",
    "1.25::DECIMAL(5, 2)",
    "123456789012345678.125::DECIMAL(38, 3)",
    "1.5::FLOAT",
    "'nan'::DOUBLE",
    "TIMESTAMP '2024-05-06 07:08:09.123456'",
    "TIMESTAMP_NS '2024-05-06 07:08:09.123456789'",
    "TIMESTAMPTZ '2024-05-06 07:08:09+02'",
    "'2024-01-01'::TIMESTAMP_S",
    "DATE '2024-02-29'",
    "TIME '12:11:10'",
    "TIMETZ '12:11:10+02'",
    "INTERVAL 90 MINUTE",
    "'5f3a1c2e-9b7d-4e8f-a1b2-c3d4e5f60718'::UUID",
    "'\\x01\\xff'::BLOB",
    "'101'::BIT",
    "12345678901234567890123456789012345678901::BIGNUM",
    "'héllo ✓ 日本 🚀'",
    "NULL",
    "[1, 2, 3]",
    "[9007199254740993]::BIGINT[]",
    "[[1, 2], [3], NULL]",
    "[1, 2, 3]::INTEGER[3]",
    "{'k': 'v', 'n': 2, 'l': [1, 2], 'ts': TIMESTAMP '2024-05-06 07:08:09'}",
    "MAP {'a': 1, 'b': 2}",
    "MAP {1: [1.5::DECIMAL(3, 1)]}",
    "{'a': [MAP {'x': [1]}]}",
    "'{\"a\": [1, 2.5, null]}'::JSON",
    "'a'::ENUM('a', 'b')",
    "union_value(num := 2)::UNION(num INT, str VARCHAR)",
]


@pytest.fixture(scope="module")
def cons():
    locked = duckdb.connect()
    lock_down(locked)
    plain = duckdb.connect()
    yield locked, plain
    locked.close()
    plain.close()


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_rows_of_equals_fetchall(cons, expr):
    locked, plain = cons
    sql = f"SELECT {expr} AS v" if " FROM " in expr else f"SELECT {expr} AS v, {expr} AS w FROM range(3)"
    result = run_query(locked, sql)
    expected = plain.execute(sql).fetchall()
    assert repr(result.rows) == repr(expected)
    assert repr(rows_of(from_ipc(to_ipc(result.table)))) == repr(expected)
