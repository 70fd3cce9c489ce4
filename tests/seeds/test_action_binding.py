"""Issue 15 item 5: evidence bound to its action; a citation of evidence produced for another action is a
mismatch, and claim_support and the report do not count it as support."""

from __future__ import annotations

from pathlib import Path

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_fixture

NEW = oi.ActionBinding(run_id="run_gc", config_hash="sha256:new", variant="candidate")
OLD = oi.ActionBinding(run_id="run_gc", config_hash="sha256:old", variant="candidate")


def record() -> None:
    with oi.flow_run("game_change", run_id="run_gc"), oi.step("evaluate"):
        src = oi.source("file:///runs/telemetry.json", source_id="src_tel")
        fresh = oi.evidence_item(src, "peak 330", confidence="high", evidence_id="ev_new", action=NEW)
        stale = oi.evidence_item(src, "peak 420", confidence="high", evidence_id="ev_old", action=OLD)
        loose = oi.evidence_item(src, "fps 58", confidence="high", evidence_id="ev_unbound")
        oi.verifier_result("peak_alive_bullets", passed=True, score=330, target_id="artv_c2", action=NEW)
        ok = oi.claim("Candidate 2 keeps peak bullets under 350", confidence="high", claim_id="cl_ok", action=NEW,
                      artifact_version_id="artv_rep")  # fmt: skip
        bad = oi.claim("Candidate 2 is smooth", confidence="high", claim_id="cl_stale", action=NEW,
                       artifact_version_id="artv_rep")  # fmt: skip
        oi.citation(ok, fresh, citation_id="cit_ok")
        oi.citation(ok, loose, citation_id="cit_loose")  # unbound evidence: nothing to compare
        oi.citation(bad, stale, citation_id="cit_stale")
        art = oi.create_artifact("Evaluation", artifact_id="art_rep")
        art.add_version(
            "# Evaluation\n\n- Candidate 2 keeps peak bullets under 350\n- Candidate 2 is smooth\n",
            version_id="artv_rep",
        )


db = store_fixture(record)


def test_mismatched_evidence_is_flagged_and_does_not_support(db: Path) -> None:
    assert rows(db, "SELECT record_kind, record_id, action_config_hash FROM action_bindings ORDER BY 1, 2") == [
        {"record_kind": "claim", "record_id": "cl_ok", "action_config_hash": "sha256:new"},
        {"record_kind": "claim", "record_id": "cl_stale", "action_config_hash": "sha256:new"},
        {"record_kind": "evidence_item", "record_id": "ev_new", "action_config_hash": "sha256:new"},
        {"record_kind": "evidence_item", "record_id": "ev_old", "action_config_hash": "sha256:old"},
        {"record_kind": "verifier_result", "record_id": rows(db, "SELECT span_id FROM spans WHERE name LIKE "
         "'verify %'")[0]["span_id"], "action_config_hash": "sha256:new"},
    ]  # fmt: skip
    assert rows(db, "SELECT citation_id, mismatched, claim_config_hash, evidence_config_hash"
                " FROM evidence_binding_mismatches") == [
        {"citation_id": "cit_stale", "mismatched": ["config_hash"], "claim_config_hash": "sha256:new",
         "evidence_config_hash": "sha256:old"},
    ]  # fmt: skip
    support = rows(db, "SELECT claim_id, status, why, supporting_evidence, mismatched_evidence FROM claim_support"
                   " ORDER BY claim_id")  # fmt: skip
    assert support == [
        {"claim_id": "cl_ok", "status": "supported", "why": "2 evidence item(s) cited validly and not rejected",
         "supporting_evidence": 2, "mismatched_evidence": 0},
        {"claim_id": "cl_stale", "status": "unverified",
         "why": "1 cited evidence item(s) produced for another action (binding mismatch)",
         "supporting_evidence": 0, "mismatched_evidence": 1},
    ]  # fmt: skip
    lineage = rows(db, "SELECT citation_id, supports, binding_mismatch FROM claim_lineage ORDER BY citation_id")
    assert [(r["citation_id"], r["supports"], r["binding_mismatch"]) for r in lineage] == [
        ("cit_loose", True, False),
        ("cit_ok", True, False),
        ("cit_stale", False, True),
    ]
    report = run_cli(db, "export", "report", "art_rep")
    assert "- Candidate 2 keeps peak bullets under 350 [ev_unbound] [ev_new]\n" in report
    assert "- Candidate 2 is smooth [ev_old mismatch] *(unverified: 1 cited evidence item(s) produced for another" \
        " action (binding mismatch))*" in report  # fmt: skip


def test_claim_lineage_of_judges_the_binding_as_the_view_does(db: Path) -> None:
    for claim in ("cl_ok", "cl_stale"):
        view = rows(db, "SELECT * FROM claim_lineage WHERE claim_id = ? ORDER BY citation_id", [claim])
        macro = rows(db, "SELECT * FROM claim_lineage_of(?) ORDER BY citation_id", [claim])
        assert macro == view, claim
        assert view, claim
    assert [r["binding_mismatch"] for r in rows(db, "SELECT * FROM claim_lineage_of('cl_stale')")] == [True]
