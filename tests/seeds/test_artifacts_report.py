"""Issue 15 items 8 and 9: a created artifact with no version is a draft; the Markdown report's citation
forms and its footer's run."""

from __future__ import annotations

import json
from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_of


def test_created_artifact_without_version_reads_draft(tmp_path: Path) -> None:
    def record() -> None:
        with oi.flow_run("w", run_id="run_a"):
            oi.create_artifact("Plan", artifact_id="art_empty")
            oi.create_artifact("Report", artifact_id="art_one").add_version("# R", version_id="artv_one_1")

    db = store_of(tmp_path / "s.duckdb", record)
    got = rows(db, "SELECT artifact_id, status, versions FROM artifacts ORDER BY artifact_id")
    assert got == [
        {"artifact_id": "art_empty", "status": "draft", "versions": 0},
        {"artifact_id": "art_one", "status": "draft", "versions": 1},
    ]
    listed = json.loads(run_cli(db, "artifacts", "--format", "json"))
    assert {a["artifact_id"]: a["status"] for a in listed} == {"art_empty": "draft", "art_one": "draft"}
