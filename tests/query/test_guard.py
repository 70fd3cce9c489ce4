"""The query API never reveals the store's file path (issue 11, item 5): every argument-less table function,
every system view and every setting of the running DuckDB is asked for through the API of a real receiver, and
no reply — result or error — contains the path or its folder. A DuckDB upgrade that adds a function revealing
it fails here, and the function joins ``REFUSED_FUNCTIONS``."""

from __future__ import annotations

from pathlib import Path

import requests

from otel_agent.query.readonly import REFUSED_FUNCTIONS
from tests.conftest import rows


def ask(receiver, sql: str) -> requests.Response:
    return requests.post(receiver.http_address + "/v1/query", json={"sql": sql, "maxRows": 100000}, timeout=30)


def test_no_reply_reveals_the_store_path(receiver):
    db = Path(receiver.config.db).resolve()
    secrets = [str(db), str(db.parent), db.parent.name]
    table_functions = [
        name
        for (name,) in rows(
            receiver,
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'table' "
            "AND len(parameters) = 0 ORDER BY 1",
        )
    ]
    views = [
        f"{schema}.{name}"
        for schema, name in rows(
            receiver, "SELECT schema_name, view_name FROM duckdb_views() WHERE internal ORDER BY ALL"
        )
    ]
    settings = [name for (name,) in rows(receiver, "SELECT name FROM duckdb_settings() ORDER BY 1")]
    assert len(table_functions) > 30
    assert len(views) > 10
    assert len(settings) > 100
    # The path really is there to be found: these spell it out.
    revealing = rows(
        receiver,
        "SELECT (SELECT path FROM duckdb_databases() WHERE path IS NOT NULL LIMIT 1),"
        " (SELECT file FROM pragma_database_list WHERE file IS NOT NULL LIMIT 1),"
        " (SELECT value FROM duckdb_settings() WHERE name = 'allowed_paths')",
    )[0]
    assert all(secrets[1] in str(v) for v in revealing), revealing

    statements = [f"SELECT * FROM {name}()" for name in table_functions]
    statements += [f"SELECT * FROM {view}" for view in views]
    statements += [f"SELECT current_setting('{name}')" for name in settings]
    statements += [
        "SELECT * FROM duckdb_databases",
        "SELECT * FROM pragma_database_list",
        "SHOW DATABASES",
        "SELECT * FROM information_schema.schemata",
        "SELECT * FROM no_such_table",  # an error message naming the catalog
        "SELECT * FROM read_csv('x.csv')",
        "SELECT database_name, path FROM duckdb_databases()",
    ]
    answered = refused = 0
    leaks = []
    for sql in statements:
        resp = ask(receiver, sql)
        assert resp.status_code in (200, 400), (sql, resp.status_code)
        if any(secret in resp.text for secret in secrets):
            leaks.append(sql)
        if resp.status_code == 200:
            answered += 1
        elif "is not allowed in the query API" in resp.json()["message"]:
            refused += 1
    assert leaks == []
    assert answered > 60, answered  # most of the catalogue is readable; only the revealing parts are refused
    assert refused >= len(settings)  # current_setting() is refused, whatever the setting
    assert {"duckdb_databases", "pragma_database_list", "duckdb_settings", "current_setting"} <= set(REFUSED_FUNCTIONS)
