"""Issue 15 item 7, quality metrics: quality.* per run (quality_metrics) from claims, citations, verifier results
and human reviews recorded through the helpers and `otel-agent review`, read back from the view."""

from __future__ import annotations

from pathlib import Path

import otel_agent.instrument as oi
from otel_agent.read.reviews import write_review
from otel_agent.store.database import open_store
from tests.seeds.support import rows, run_cli, store_of

RUN = "run_quality"


def record() -> None:
    with oi.flow_run("deep_research", run_id=RUN), oi.step("synthesize"):
        src = oi.source("https://example.org/a", title="A")
        ev = oi.evidence_item(src, "adoption grew", confidence="high", evidence_id="ev_q")
        for n, status in enumerate(("valid", "valid", "invalid")):
            claim = oi.claim(f"claim {n}", confidence="high", claim_id=f"claim_q{n}")
            oi.citation(claim, ev, status=status)
        oi.claim("uncited", confidence="low", claim_id="claim_q3")
        oi.verifier_result("citation_coverage", passed=False, score=0.5)
        oi.verifier_result("citation_coverage", passed=True, score=1.0)
        oi.verifier_result("schema", passed=True)


def test_quality_metrics_per_run(tmp_path: Path) -> None:
    db = store_of(tmp_path / "s.duckdb", record)
    run_cli(db, "review", "approve", "claim", "claim_q0", "--reviewer", "ana", "--reason", "checked")
    con = open_store(db)  # the other two as the ReviewService writes them (one store open, not one per command)
    try:
        write_review(con, "claim", "claim_q1", "reject", "ana", "overstated")
        write_review(con, "evidence_item", "ev_q", "approve", "ana", "primary source")
    finally:
        con.close()
    got = {
        r["metric"]: (r["value"], r["unit"]) for r in rows(db, "SELECT * FROM quality_metrics WHERE run_id = ?", [RUN])
    }
    assert got == {
        "quality.claims": (4.0, "{count}"),
        # claim_q0 is supported (valid citation, approved evidence); q1 is rejected by its reviewer, q2's
        # citation is invalid, q3 has none
        "quality.supported_claim_ratio": (0.25, "1"),
        "quality.citation_validity": (2 / 3, "1"),
        "quality.verifier_pass_rate": (2 / 3, "1"),
        "quality.verifier_score_avg": (0.75, "1"),
        "quality.review_approval_rate": (2 / 3, "1"),
    }
