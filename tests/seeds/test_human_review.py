"""Issue 15 item 3: a human closes a human_review decision — through `otel-agent review` on the file and through
a live receiver's ReviewService — append-only, the decision record kept; the decisions view shows the verdict."""

from __future__ import annotations

import json
from pathlib import Path

import requests
from click.testing import CliRunner
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

import otel_agent.instrument as oi
from otel_agent.main import cli
from tests.conftest import write_tokens_file
from tests.seeds.support import recording, rows, store_of


def record() -> None:
    with oi.flow_run("game_change", run_id="run_gc"), oi.step("quality_review", iteration=1):
        oi.decision_record(
            "quality_review",
            model_decision="repair",
            model_action="REDUCE_BULLET_SPEED",
            effective_decision="human_review",
            effective_action="REDUCE_BULLETS_PER_WAVE",
            expected_action="REDUCE_BULLETS_PER_WAVE",
            policy_passed=False,
            reason="agent action conflicts with the policy",
            iteration=1,
            decision_id="dec_hr",
        )
        oi.decision_record("quality_review", model_decision="accept", effective_decision="accept", decision_id="dec_ok")


def review(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["review", *args, "--db", str(db)])
    return result.exit_code, result.output


def test_a_human_answers_a_human_review_decision_from_the_cli(tmp_path: Path) -> None:
    db = store_of(tmp_path / "s.duckdb", record)
    code, out = review(db, "annotate", "decision", "dec_hr", "--reviewer", "carol", "--reason", "looking")
    assert code == 0, out
    code, out = review(db, "approve", "decision", "dec_hr", "--reviewer", "alice", "--reason", "policy is right")
    assert code == 0
    assert "approve decision dec_hr by alice" in out
    # a decision that asked for no human gets no verdict, and nothing is written
    code, out = review(db, "reject", "decision", "dec_ok", "--reviewer", "alice", "--reason", "no")
    assert code == 2
    assert "effective decision is human_review" in out
    assert "'accept'" in out
    got = rows(
        db,
        "SELECT decision_id, model_decision, effective_decision, human_verdict, human_reviewer, human_reason,"
        " human_annotations FROM decisions ORDER BY decision_id",
    )
    assert got == [
        {"decision_id": "dec_hr", "model_decision": "repair", "effective_decision": "human_review",
         "human_verdict": "approve", "human_reviewer": "alice", "human_reason": "policy is right",
         "human_annotations": 1},
        {"decision_id": "dec_ok", "model_decision": "accept", "effective_decision": "accept",
         "human_verdict": None, "human_reviewer": None, "human_reason": None, "human_annotations": 0},
    ]  # fmt: skip
    stored = rows(db, "SELECT target_kind, decision, target_snapshot FROM reviews ORDER BY reviewed_at")
    assert [(r["target_kind"], r["decision"]) for r in stored] == [("decision", "annotate"), ("decision", "approve")]
    assert json.loads(stored[1]["target_snapshot"])["effective_decision"] == "human_review"  # the original kept
    # a later verdict wins; the earlier one stays in the table
    code, _ = review(db, "reject", "decision", "dec_hr", "--reviewer", "bob", "--reason", "second look")
    assert code == 0
    assert rows(db, "SELECT human_verdict, human_reviewer FROM decisions WHERE decision_id = 'dec_hr'") == [
        {"human_verdict": "reject", "human_reviewer": "bob"}
    ]
    assert rows(db, "SELECT count(*) AS n FROM reviews WHERE target_kind = 'decision'") == [{"n": 3}]


def test_the_review_service_takes_a_decision_verdict(make_receiver, tmp_path: Path) -> None:
    reviewer = {"token": "rev-s3cret", "principal": "alice", "roles": ["review", "query", "ingest"]}
    receiver = make_receiver(tokens_file=write_tokens_file(tmp_path / "tokens.json", reviewer))
    auth = {"Authorization": "Bearer rev-s3cret"}
    with recording() as spans:
        record()
    resp = requests.post(
        receiver.http_address + "/v1/traces",
        data=encode_spans(spans).SerializeToString(),
        headers={"Content-Type": "application/x-protobuf", **auth},
        timeout=30,
    )
    assert resp.status_code == 200, resp.text
    body = {"targetKind": "decision", "targetId": "dec_hr", "decision": "reject", "reviewer": "alice",
            "reason": "the gate is wrong here"}  # fmt: skip
    resp = requests.post(receiver.http_address + "/v1/review", json=body, headers=auth, timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.json()["targetKind"] == "decision"
    assert resp.json()["principal"] == "alice"
    refused = requests.post(
        receiver.http_address + "/v1/review", json={**body, "targetId": "dec_ok"}, headers=auth, timeout=30
    )
    assert refused.status_code == 400
    assert "human_review" in refused.text
    resp = requests.post(
        receiver.http_address + "/v1/query",
        json={"sql": "SELECT decision_id, human_verdict, human_reviewer FROM decisions ORDER BY 1"},
        headers=auth,
        timeout=30,
    )
    assert resp.status_code == 200, resp.text
    assert [r["values"] for r in resp.json()["rows"]] == [["dec_hr", "reject", "alice"], ["dec_ok", None, None]]
