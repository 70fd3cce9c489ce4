"""docs/views-evidence.md lists every column of every view and table the evidence SQL creates, in order."""

from __future__ import annotations

import re
from pathlib import Path

from otel_agent.store.database import PRODUCT_TABLES, open_store
from otel_agent.store.statements import ddl

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = {"receipt_transition_spans"}  # described in prose: the state macros' input


def declared() -> list[str]:
    names = list(PRODUCT_TABLES)  # in the schema (store/schema/), documented with the views over them
    for stmt in ddl("views/evidence"):
        names += re.findall(r"CREATE (?:OR REPLACE VIEW|TABLE IF NOT EXISTS) (\w+)", stmt.sql)
    return [n for n in names if n not in INTERNAL]


def documented(doc: str, name: str) -> list[str]:
    match = re.search(rf"^###+ `{name}`[^\n]*\n(.*?)(?=^#+ |\Z)", doc, re.S | re.M)
    assert match, f"docs/views-evidence.md has no section for {name}"
    return re.findall(r"^\| `([a-z_0-9]+)` \|", match.group(1), re.M)


def test_every_view_and_column_is_documented(tmp_path):
    doc = (ROOT / "docs" / "views-evidence.md").read_text()
    con = open_store(tmp_path / "s.duckdb")
    try:
        names = declared()
        assert len(names) >= 25
        for name in names:
            columns = [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]
            assert documented(doc, name) == columns, name
    finally:
        con.close()
