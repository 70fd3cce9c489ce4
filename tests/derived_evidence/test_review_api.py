"""The ReviewService of a live receiver: HTTP POST /v1/review (JSON and protobuf) and gRPC, the `review` role,
unknown ids (404 / NOT_FOUND, nothing written), writer trust, and the CLI finding the receiver that holds the
file; exports read through the receiver equal exports read from the closed file."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
import requests
from click.testing import CliRunner
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from otel_agent.api.v1 import review_pb2, review_pb2_grpc
from otel_agent.main import cli
from otel_agent.read.artifacts import evidence_bundle
from otel_agent.read.reports import Report
from otel_agent.read.reports import build_report as report_of
from otel_agent.read.stores import Where, open_source
from tests.conftest import rows, write_tokens_file
from tests.derived_evidence.support import request, transition

REVIEWER = "reviewer-s3cret"
ANALYST = "analyst-s3cret"
AGENT = "agent-s3cret"
INTRUDER = "intruder-s3cret"


def build_report(where: Where, *args: Any, **kwargs: Any) -> Report:
    """The report of ``otel-agent export report`` (``read.reports``), read where ``where`` says."""
    with open_source(where) as src:
        return report_of(src, *args, **kwargs)


def build_bundle(where: Where, run_id: str) -> dict[str, Any]:
    """The bundle of ``otel-agent export bundle`` (``read.artifacts.evidence_bundle``)."""
    with open_source(where) as src:
        return evidence_bundle(src, run_id)


@pytest.fixture
def tokens_file(tmp_path):
    return write_tokens_file(
        tmp_path / "tokens.json",
        {"token": REVIEWER, "principal": "alice", "roles": ["review", "query", "ingest"]},
        {"token": ANALYST, "principal": "analyst", "roles": ["query"]},
        {"token": AGENT, "principal": "researcher", "roles": ["ingest"]},
        {"token": INTRUDER, "principal": "intruder", "roles": ["ingest"]},
    )


def post(receiver, path, body, token=None, content_type="application/json"):
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body) if content_type == "application/json" else body
    return requests.post(receiver.http_address + path, data=data, headers=headers, timeout=30)


def ingest(receiver, payload, token=None):
    resp = post(receiver, "/v1/traces", payload, token, "application/x-protobuf")
    assert resp.status_code == 200, resp.content


@pytest.fixture
def live(make_receiver, tokens_file, research):
    receiver = make_receiver(tokens_file=tokens_file)
    ingest(receiver, encode_spans(research.spans).SerializeToString(), REVIEWER)
    return receiver


def review_body(**fields):
    body = {"targetKind": "claim", "targetId": "cl_weak", "decision": "approve", "reviewer": "alice", "reason": "ok"}
    body.update(fields)
    return body


def test_http_json_and_protobuf(live):
    resp = post(live, "/v1/review", review_body(), REVIEWER)
    assert resp.status_code == 200, resp.text
    doc = resp.json()
    assert (doc["targetKind"], doc["targetId"], doc["decision"], doc["principal"]) == (
        "claim",
        "cl_weak",
        "approve",
        "alice",
    )
    assert json.loads(doc["targetSnapshotJson"])["status"] == "unverified"
    message = review_pb2.ReviewRequest(
        target_kind="evidence", target_id="ev_a1", decision="reject", reviewer="alice", reason="misquoted"
    )
    resp = post(live, "/v1/review", message.SerializeToString(), REVIEWER, "application/x-protobuf")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/x-protobuf"
    answer = review_pb2.ReviewResponse.FromString(resp.content)
    assert answer.target_kind == "evidence_item"
    assert answer.review_id.startswith("rev_")
    assert rows(live, "SELECT target_id, decision, principal FROM reviews ORDER BY reviewed_at") == [
        ("cl_weak", "approve", "alice"),
        ("ev_a1", "reject", "alice"),
    ]
    assert rows(live, "SELECT status FROM claim_support WHERE claim_id = 'cl_weak'") == [("supported",)]


def test_http_errors_write_nothing(live):
    resp = post(live, "/v1/review", review_body(targetId="cl_nope"), REVIEWER)
    assert resp.status_code == 404
    assert "no claim with id 'cl_nope'" in resp.json()["message"]
    resp = post(live, "/v1/review", review_body(decision="resolve"), REVIEWER)
    assert resp.status_code == 400
    assert "one of ['approve', 'reject', 'annotate']" in resp.json()["message"]
    resp = post(live, "/v1/review", b"\xff\xff", REVIEWER, "application/x-protobuf")
    assert resp.status_code == 400
    status = status_pb2.Status.FromString(resp.content)
    assert "invalid ReviewRequest" in status.message
    assert post(live, "/v1/review", review_body()).status_code == 401
    resp = post(live, "/v1/review", review_body(), ANALYST)
    assert resp.status_code == 403
    assert "lacks the 'review' role" in resp.json()["message"]
    assert rows(live, "SELECT count(*) FROM reviews") == [(0,)]


def test_grpc(live):
    with grpc.insecure_channel(live.grpc_address) as channel:
        stub = review_pb2_grpc.ReviewServiceStub(channel)
        auth = [("authorization", f"Bearer {REVIEWER}")]
        answer = stub.Review(
            review_pb2.ReviewRequest(target_kind="conflict", target_id="conflict_1", decision="acknowledge",
                                     reviewer="alice"),
            metadata=auth,
        )  # fmt: skip
        assert answer.decision == "acknowledge"
        assert answer.principal == "alice"
        with pytest.raises(grpc.RpcError) as err:
            stub.Review(review_pb2.ReviewRequest(target_kind="conflict", target_id="nope", decision="resolve",
                                                 reviewer="alice"), metadata=auth)  # fmt: skip
        assert err.value.code() is grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as err:
            stub.Review(review_pb2.ReviewRequest(target_kind="conflict", target_id="conflict_1",
                                                 decision="resolve", reviewer="x"),
                        metadata=[("authorization", f"Bearer {ANALYST}")])  # fmt: skip
        assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
        change = stub.SetWriterTrust(
            review_pb2.WriterTrustRequest(principal="intruder", service_name="researcher", trusted=True,
                                          changed_by="alice"),
            metadata=auth,
        )  # fmt: skip
        assert change.change_id.startswith("trust_")
    assert rows(live, "SELECT status FROM conflicts") == [("acknowledged",)]
    assert rows(live, "SELECT principal, service_name, trusted FROM trusted_writers") == [
        ("intruder", "researcher", True)
    ]


def test_untrusted_writer_through_the_receiver(live):
    """A token's principal that does not match the service it claims: kept, marked untrusted, state uncertain."""
    ingest(
        live, request([transition("op_x", "hof_x", "delegated", 0, service="researcher")]).SerializeToString(), AGENT
    )
    ingest(
        live, request([transition("op_x", "hof_x", "accepted", 1, service="researcher")]).SerializeToString(), INTRUDER
    )
    assert rows(live, "SELECT principal, trust FROM receipt_transitions WHERE operation_id = 'op_x' ORDER BY time") == [
        ("researcher", "trusted"),
        ("intruder", "untrusted"),
    ]
    assert rows(live, "SELECT state FROM receipt_state WHERE operation_id = 'op_x'") == [("uncertain",)]
    resp = post(
        live,
        "/v1/writer_trust",
        {"principal": "intruder", "serviceName": "*", "trusted": True, "changedBy": "alice", "reason": "gateway"},
        REVIEWER,
    )
    assert resp.status_code == 200, resp.text
    assert rows(live, "SELECT trust FROM receipt_transitions WHERE operation_id = 'op_x' ORDER BY time") == [
        ("trusted",),
        ("trusted",),
    ]


def test_cli_goes_through_the_receiver_holding_the_file(live, tmp_path):
    runner = CliRunner()
    db = live.config.db
    out = runner.invoke(
        cli,
        ["review", "approve", "version", "artv_2", "--reviewer", "alice", "--db", db, "--token", REVIEWER, "--json"],
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["via"] == live.http_address
    out = runner.invoke(
        cli, ["review", "approve", "claim", "cl_nope", "--reviewer", "a", "--db", db, "--token", REVIEWER]
    )
    assert out.exit_code == 2
    assert "no claim with id 'cl_nope'" in out.output
    # The scenario was sent with alice's token while its spans claim services "researcher" and "crawler".
    out = runner.invoke(cli, ["receipts", "--db", db, "--token", REVIEWER, "--format", "json"])
    assert out.exit_code == 0
    assert json.loads(out.output)[0]["state"] == "uncertain"
    out = runner.invoke(cli, ["trust", "alice", "*", "--by", "ops", "--db", db, "--token", REVIEWER])
    assert out.exit_code == 0
    assert "granted alice -> *" in out.output
    out = runner.invoke(cli, ["receipts", "--db", db, "--token", REVIEWER, "--format", "json"])
    assert out.exit_code == 0
    assert json.loads(out.output)[0]["state"] == "verified"

    live_report = build_report(Where((str(db),), token=REVIEWER), "art_report").markdown
    live_bundle = build_bundle(Where((str(db),), token=REVIEWER), "run_main")
    assert "approved by alice" in live_report
    live.stop()
    assert build_report(Where((str(db),)), "art_report").markdown == live_report
    assert build_bundle(Where((str(db),)), "run_main") == live_bundle
