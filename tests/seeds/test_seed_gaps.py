"""Issue 33's seed gaps, recorded with the public helpers and read back from the public views and the CLI:
the quality.* family in run_metrics, seed 000's `evidence.added` / `artifact.created` on run_timeline, input /
output references on the work's spans (span_refs), and memory scope types checked as helper misuse."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

import otel_agent.instrument as oi
from otel_agent.instrument import _misuse
from otel_agent.read.reviews import write_review
from otel_agent.store.database import open_store
from tests.conftest import serve_ui
from tests.seeds.support import rows, run_cli, store_of

RUN = "run_gaps"


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default mode of an agent: misuse is logged and marked, not raised (the suite runs strict)."""
    monkeypatch.delenv(_misuse.STRICT_ENV, raising=False)
    _misuse.forget_call_sites()
    yield
    _misuse.forget_call_sites()


def record() -> None:
    with oi.flow_run("deep_research", run_id=RUN, input_ref="s3://requests/q-17.json") as run:
        with oi.step("search", input_ref="artifact:requirement") as st:
            src = oi.source("https://example.org/a", title="A", source_id="src_a")
            ev_a = oi.evidence_item(src, "adoption grew", confidence="high", evidence_id="ev_a")
            ev_b = oi.evidence_item(src, "adoption fell", confidence="low", evidence_id="ev_b")
            with oi.tool_invocation("web_search", input_ref="sha256:ab12") as tool:
                tool.set_output_ref("sha256:cd34")
            st.set_output_ref("artifact:hits")
        with oi.step("synthesize"):
            report = oi.create_artifact("report", artifact_id="art_report")
            version = report.add_version("# Report", evidence_ids=[ev_a], version_id="artv_1")
            supported = oi.claim("adoption grew", confidence="high", claim_id="cl_supported")
            oi.citation(supported, ev_a, status="valid")
            conflicted_1 = oi.claim("adoption is up", confidence="high", claim_id="cl_conflict_1")
            oi.citation(conflicted_1, ev_a, status="valid")
            conflicted_2 = oi.claim("adoption is down", confidence="low", claim_id="cl_conflict_2")
            oi.citation(conflicted_2, ev_b, status="valid")
            oi.conflict("up or down?", claim_ids=[conflicted_1, conflicted_2], conflict_id="cf_1")
            weak = oi.claim("maybe", confidence="low", claim_id="cl_weak")
            oi.citation(weak, ev_a, status="weak")
            oi.claim("uncited", confidence="low", claim_id="cl_uncited")
            oi.claim("overstated", confidence="high", claim_id="cl_rejected")
            oi.verifier_result("citation_coverage", passed=False, score=0.25)
            oi.verifier_result("citation_coverage", passed=True, score=0.75)
            oi.verifier_result("schema", passed=True)
        run.set_output_ref(version)
    with oi.flow_run("other", run_id="run_other"):
        oi.claim("elsewhere", confidence="high", claim_id="cl_other")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = store_of(tmp_path_factory.mktemp("gaps") / "s.duckdb", record)
    con = open_store(path)  # verdicts as the ReviewService writes them (what `otel-agent review` does)
    try:
        write_review(con, "claim", "cl_rejected", "reject", "ana", "overstated")
        write_review(con, "evidence_item", "ev_a", "approve", "ana", "primary source")
        write_review(con, "artifact_version", "artv_1", "approve", "bo", "reads well")
        write_review(con, "claim", "cl_other", "reject", "ana", "another run's")
    finally:
        con.close()
    return path


def test_quality_metrics_are_rows_of_run_metrics(db: Path) -> None:
    per_run = rows(
        db, "SELECT metric, value, unit, labels FROM run_metrics_for_run(?) WHERE metric LIKE 'quality.%'", [RUN]
    )
    got = {r["metric"]: (r["value"], r["unit"]) for r in per_run}
    assert got == {
        "quality.claims": (6.0, "{count}"),
        "quality.claims.supported": (1.0, "{count}"),  # cl_supported: a valid citation of approved ev_a
        "quality.claims.unverified": (2.0, "{count}"),  # cl_weak (weak citation only), cl_uncited
        "quality.claims.conflicted": (2.0, "{count}"),  # both claims of the unresolved conflict cf_1
        "quality.claims.rejected": (1.0, "{count}"),  # by its reviewer
        "quality.supported_claim_ratio": (1 / 6, "1"),
        "quality.evidence_coverage": (3 / 6, "1"),  # claims with a valid citation: supported + the conflicted two
        "quality.citation_validity": (3 / 4, "1"),
        "quality.verifier_results": (3.0, "{count}"),
        "quality.verifier_pass_rate": (2 / 3, "1"),
        "quality.verifier_score_avg": (0.5, "1"),
        "quality.human.approvals": (2.0, "{count}"),  # ev_a, artv_1
        "quality.human.rejections": (1.0, "{count}"),  # cl_rejected (cl_other is another run's)
        "quality.review_approval_rate": (2 / 3, "1"),
    }
    assert all(r["labels"] is None for r in per_run)
    # the view holds the same rows, every run's; the other families are still there
    whole = rows(db, "SELECT run_id, metric, value FROM run_metrics WHERE metric LIKE 'quality.%'")
    assert {r["metric"]: r["value"] for r in whole if r["run_id"] == RUN} == {k: v for k, (v, _) in got.items()}
    other = {r["metric"]: r["value"] for r in whole if r["run_id"] == "run_other"}
    assert other["quality.claims.rejected"] == 1.0
    assert other["quality.human.rejections"] == 1.0
    assert "quality.verifier_pass_rate" not in other  # no verifier result: no ratio row, never a 0
    families = {r["metric"].split(".")[0] for r in rows(db, "SELECT metric FROM run_metrics_for_run(?)", [RUN])}
    assert {"cost", "usage", "reliability", "latency", "quality"} <= families
    # the CLI prints them with the rest
    printed = json.loads(run_cli(db, "metrics", RUN, "--format", "json"))
    assert {r["metric"]: r["value"] for r in printed if r["metric"].startswith("quality.")}["quality.claims"] == 6.0


def test_run_timeline_has_the_seed_record_events(db: Path) -> None:
    timeline = rows(db, "SELECT event, subject, detail FROM run_timeline_for_run(?) ORDER BY seq", [RUN])
    events = [(r["event"], r["subject"]) for r in timeline]
    assert ("evidence.added", "ev_a") in events
    assert ("evidence.added", "ev_b") in events
    assert events.index(("artifact.created", "art_report")) < events.index(("artifact.version_created", "art_report"))
    details = {(r["event"], r["subject"]): r["detail"] for r in timeline}
    assert details[("evidence.added", "ev_a")] == "source src_a"
    assert rows(db, "SELECT count(*) AS n FROM run_timeline WHERE event = 'evidence.added'") == [{"n": 2}]
    # inside its step, after the step started
    assert events.index(("step.started", "search")) < events.index(("evidence.added", "ev_a"))


def test_input_and_output_refs_are_in_span_refs(db: Path) -> None:
    got = rows(
        db,
        "SELECT record_kind, span_name, input_ref, output_ref, step_id IS NOT NULL AS in_step "
        "FROM span_refs_for_run(?) ORDER BY start_time, span_name",
        [RUN],
    )
    assert [(r["record_kind"], r["span_name"], r["input_ref"], r["output_ref"]) for r in got] == [
        ("flow_run", "invoke_workflow deep_research", "s3://requests/q-17.json", "artv_1"),
        ("step", "step search", "artifact:requirement", "artifact:hits"),
        ("tool_invocation", "execute_tool web_search", "sha256:ab12", "sha256:cd34"),
    ]
    assert rows(db, "SELECT count(*) AS n FROM span_refs") == [{"n": 3}]


def test_the_console_run_page_shows_them(db: Path) -> None:
    (step,) = rows(db, "SELECT trace_id, span_id FROM span_refs_for_run(?) WHERE record_kind = 'step'", [RUN])
    with serve_ui("--db", str(db)) as url:
        page = requests.get(f"{url}/runs/{RUN}", params={"span": f"{step['trace_id']}:{step['span_id']}"}, timeout=60)
    assert page.status_code == 200, page.text[:500]
    html = page.text
    for metric in ("quality.claims.conflicted", "quality.evidence_coverage", "quality.human.approvals"):
        assert f'<th class="mono">{metric}</th>' in html, metric  # the metrics table
    assert "evidence.added" in html  # the timeline
    assert "artifact.created" in html
    # the node details of the selected step list its attributes, the two refs among them
    assert '<td class="k">otel_agent.input.ref</td><td class="v">artifact:requirement</td>' in html
    assert '<td class="k">otel_agent.output.ref</td><td class="v">artifact:hits</td>' in html


def test_a_bad_ref_is_misuse_left_out_and_marked(tmp_path: Path, lenient: None, caplog) -> None:
    def misuse() -> None:
        with oi.flow_run("w", run_id="run_bad_ref"), oi.step("s", input_ref="x" * 5000) as st:
            st.set_output_ref("")
            with oi.guard("output.check") as g:
                g.set_output_ref("sha256:ok")  # a guard has no output ref

    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        db = store_of(tmp_path / "s.duckdb", misuse)
    assert rows(db, "SELECT count(*) AS n FROM span_refs_for_run('run_bad_ref')") == [{"n": 0}]
    marks = [r["detail"] for r in rows(db, "SELECT detail FROM data_quality WHERE run_id = 'run_bad_ref' ORDER BY 1")]
    assert any(m.startswith("input_ref must be a reference of 1-2048 characters") for m in marks), marks
    assert any(m.startswith("output_ref must be a reference") for m in marks), marks
    assert any("takes no output_ref" in m for m in marks), marks
    assert len([r for r in caplog.records if "misuse" in r.getMessage()]) == 3


def test_a_bad_ref_raises_in_strict_mode() -> None:
    with pytest.raises(oi.InvalidValueError, match="input_ref"):
        oi.step("s", input_ref=42)  # type: ignore[arg-type]
    with oi.flow_run("w"), oi.step("s") as st, pytest.raises(oi.InvalidValueError, match="output_ref"):
        st.set_output_ref("y" * 3000)


def test_an_unknown_memory_scope_type_is_misuse(tmp_path: Path, lenient: None, caplog) -> None:
    def propose() -> None:
        with oi.flow_run("w", run_id="run_memory"):
            team = oi.MemoryScope("team", "t_research")  # not one of seed 000's scopes
            oi.propose_memory(
                "semantic",
                "two providers beat one",
                scopes=[team, oi.MemoryScope("project", "proj_research")],
                rationale="coverage",
                proposal_id="memp_team",
            )

    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        db = store_of(tmp_path / "s.duckdb", propose)
    warnings = [r.getMessage() for r in caplog.records if r.name == "otel_agent.instrument"]
    assert any("scope type must be one of" in w and "'team'" in w and "kept" in w for w in warnings), warnings
    (proposal,) = rows(db, "SELECT scopes, status FROM memory_proposals WHERE proposal_id = 'memp_team'")
    assert proposal == {"scopes": ["project:proj_research"], "status": "pending"}  # the unknown scope left out
    marks = rows(db, "SELECT record_kind, detail FROM data_quality WHERE run_id = 'run_memory'")
    assert [(m["record_kind"], m["detail"].split(",")[0]) for m in marks] == [
        ("memory_proposal", "scope type must be one of ['organization'")
    ]
    assert "'team' (left out)" in marks[0]["detail"]


def test_an_unknown_memory_scope_type_raises_in_strict_mode() -> None:
    with pytest.raises(oi.InvalidValueError, match="scope type must be one of"):
        oi.MemoryScope("team", "t_research")
    with pytest.raises(oi.InvalidValueError, match="scope ref"):
        oi.MemoryScope("user", "")
    assert oi.MemoryScope("session", "sess_1").encode() == "session:sess_1"
