"""Docs stay true: every raw column is in docs/schema.md, every setting in docs/settings.md, generated code fresh;
a file of another schema version is refused without being touched."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from otel_agent.config import SETTINGS
from otel_agent.errors import SchemaVersionError
from otel_agent.store.database import open_store
from otel_agent.store.shards import META_TABLE, RAW_TABLES

ROOT = Path(__file__).resolve().parent.parent
# every table the receiver writes, and the store's facts
DOCUMENTED_TABLES = [*RAW_TABLES, META_TABLE]


def section(doc: str, table: str) -> str:
    match = re.search(rf"^## `{table}`\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    assert match, f"docs/schema.md has no section for {table}"
    return match.group(1)


def test_every_raw_column_is_documented(tmp_path):
    doc = (ROOT / "docs" / "schema.md").read_text()
    con = open_store(tmp_path / "s.duckdb")
    for table in DOCUMENTED_TABLES:
        columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        text = section(doc, table)
        documented = re.findall(r"^\| `([a-z_]+)` \| [A-Z]", text, re.M)
        assert documented == columns, f"{table}: documented {documented} but the table has {columns}"
    con.close()


def test_every_setting_is_documented():
    doc = (ROOT / "docs" / "settings.md").read_text()
    for s in SETTINGS:
        assert s.flag in doc, f"docs/settings.md does not document {s.flag}"
        assert s.env in doc, f"docs/settings.md does not document {s.env}"


def test_generated_api_code_is_fresh():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"], capture_output=True)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_other_schema_version_is_refused_untouched(tmp_path):
    path = tmp_path / "old.duckdb"
    open_store(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE otel_agent_meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    before = path.read_bytes()
    with pytest.raises(SchemaVersionError, match="schema version 0"):
        open_store(path)
    assert path.read_bytes() == before


def test_foreign_duckdb_file_is_refused(tmp_path):
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INT)")
    con.close()
    with pytest.raises(SchemaVersionError, match="not an otel_agent store"):
        open_store(path)
