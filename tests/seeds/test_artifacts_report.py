"""Issue 15 items 8 and 9: a created artifact with no version is a draft; the Markdown report's citation
forms and its footer's run."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import otel_agent.instrument as oi
from otel_agent.main import cli
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


def _report_store(tmp_path: Path) -> Path:
    def record() -> None:
        with oi.flow_run("research", run_id="run_rep"), oi.step("synthesize"):
            src = oi.source("https://example.org/a", title="A", source_id="src_a")
            e1 = oi.evidence_item(src, "graphs everywhere", confidence="high", evidence_id="evidence_123")
            e2 = oi.evidence_item(src, "graphs in AutoGen", confidence="high", evidence_id="evidence_124")
            e3 = oi.evidence_item(src, "LangGraph DX", confidence="high", evidence_id="evidence_125")
            c1 = oi.claim(
                "Graph-based orchestration is becoming mainstream", confidence="high", artifact_version_id="artv_rep_2"
            )
            c2 = oi.claim(
                "LangGraph provides the most mature developer experience",
                confidence="high",
                artifact_version_id="artv_rep_2",
            )
            oi.citation(c1, e1)
            oi.citation(c1, e2)
            oi.citation(c2, e3, status="weak")
            art = oi.create_artifact("Comparison", artifact_id="art_rep")
            art.add_version("# Comparison\n\n- first draft\n", version_id="artv_rep_1")
        # a version added later, by another process, outside any run
        oi.add_artifact_version(
            "art_rep",
            "# Comparison\n\n- Graph-based orchestration is becoming mainstream\n"
            "- LangGraph provides the most mature developer experience\n",
            version_id="artv_rep_2",
            source_step_id="manual",
        )

    return store_of(tmp_path / "rep.duckdb", record)


def test_report_inline_citations_are_the_default(tmp_path: Path) -> None:
    db = _report_store(tmp_path)
    text = run_cli(db, "export", "report", "art_rep")
    assert text.startswith(
        "# Comparison\n\n- Graph-based orchestration is becoming mainstream [evidence_123] [evidence_124]\n"
        "- LangGraph provides the most mature developer experience [evidence_125 weak]"
    )
    assert '- [evidence_123] "graphs everywhere"' in text
    assert "[1]" not in text
    # the version was recorded outside a run: the footer still names the artifact's run
    assert "version 2 of 2 (`artv_rep_2`), draft; run `run_rep` (this version recorded outside a run);" in text
    v1 = run_cli(db, "export", "report", "art_rep", "--version", "1")
    assert "; run `run_rep`; content sha256" in v1  # recorded in the artifact's own run: no note


def test_report_numbered_citations_with_references(tmp_path: Path) -> None:
    db = _report_store(tmp_path)
    text = run_cli(db, "export", "report", "art_rep", "--citations", "numbered")
    assert text.startswith(
        "# Comparison\n\n- Graph-based orchestration is becoming mainstream [1] [2]\n"
        "- LangGraph provides the most mature developer experience [3 weak]"
    )
    refs = [line for line in text.splitlines() if line.startswith("- [")]
    assert [r.split('"')[0] for r in refs] == ["- [1] ", "- [2] ", "- [3] "]
    assert "evidence `evidence_124`" in refs[1]
    assert "## References" in text
    bad = CliRunner().invoke(cli, ["export", "report", "art_rep", "--citations", "footnote", "--db", str(db)])
    assert bad.exit_code == 2
    assert "footnote" in bad.output
