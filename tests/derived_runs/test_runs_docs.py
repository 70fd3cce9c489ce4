"""docs/views-runs.md documents every column of every public run view, and every derived SQL file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from otel_agent.store.statements import ddl
from tests.derived_runs.runs_support import RUN_VIEWS, query

DOC = Path(__file__).resolve().parents[2] / "docs" / "views-runs.md"


def section(text: str, view: str) -> str:
    match = re.search(rf"^### `{view}`.*?$(.*?)(?=^### |^## |\Z)", text, re.S | re.M)
    assert match, f"no section for {view}"
    return match.group(1)


@pytest.mark.parametrize("view", RUN_VIEWS)
def test_every_column_is_documented(demo_store: Path, view: str) -> None:
    text = section(DOC.read_text(encoding="utf-8"), view)
    columns = [r["column_name"] for r in query(demo_store, f"DESCRIBE SELECT * FROM {view}")]
    missing = [c for c in columns if f"`{c}`" not in text]
    assert not missing, f"{view}: undocumented columns {missing}"


def test_price_table_and_files_are_documented(demo_store: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    cost = text[text.index("## Cost") : text.index("## Views")]
    columns = [r["column_name"] for r in query(demo_store, "DESCRIBE price_table")]
    assert [c for c in columns if f"`{c}`" not in cost] == []
    files = [s.path.rsplit("/", 1)[-1] for s in ddl("views/runs")]
    assert [f for f in files if f"`{f}`" not in text] == []
    for metric in [r["metric"] for r in query(demo_store, "SELECT DISTINCT metric FROM run_metrics")]:
        assert f"`{metric}`" in text, metric
