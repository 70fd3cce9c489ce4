"""Handoff receipt state (seed 002): the four cases of the design — a verified handoff, a delegation never
acknowledged, a legitimate wait for approval, a completion with no verified artifact — plus a stuck worker,
a retried handoff, an untrusted writer and contradictory records, each evaluated at several timestamps with
``receipt_state_at`` / ``receipt_attempts_at``; configurable windows; and the `as of now` views."""

from __future__ import annotations

import datetime as dt

import pytest

from otel_agent.read.reviews import write_trust
from tests.derived_evidence.support import Store, at, request, transition

# Every operation of the scenario, as (operation, handoff, transition, seconds after T0, writer service, fields).
SCENARIO = [
    # op_101: the verified handoff (accepted quickly, completed, verified).
    ("op_101", "hof_101", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report", "target": "fc"}),
    ("op_101", "hof_101", "accepted", 3, "fact_checker", {}),
    ("op_101", "hof_101", "progress", 60, "fact_checker", {"reason": "sources_checked"}),
    ("op_101", "hof_101", "completed", 300, "fact_checker", {"artifact_ref": "artv_1"}),
    ("op_101", "hof_101", "outcome_verified", 320, "researcher", {"reason": "checks_passed"}),
    # op_102: delegated, never acknowledged.
    ("op_102", "hof_102", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    # op_103: accepted, then a legitimate wait for a named approval; silence afterwards is not "stuck".
    ("op_103", "hof_103", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_103", "hof_103", "accepted", 5, "fact_checker", {}),
    ("op_103", "hof_103", "progress", 30, "fact_checker", {}),
    ("op_103", "hof_103", "waiting", 40, "fact_checker", {"waiting_for": "approval:fallback_source"}),
    # op_104: completed, the verification never comes.
    ("op_104", "hof_104", "delegated", 0, "researcher", {"expected_artifact": "evidence_bundle"}),
    ("op_104", "hof_104", "accepted", 2, "fact_checker", {}),
    ("op_104", "hof_104", "completed", 100, "fact_checker", {"artifact_ref": "artv_9"}),
    # op_105: completed and the verifier says the artifact is missing.
    ("op_105", "hof_105", "delegated", 0, "researcher", {"expected_artifact": "evidence_bundle"}),
    ("op_105", "hof_105", "accepted", 2, "fact_checker", {}),
    ("op_105", "hof_105", "completed", 100, "fact_checker", {}),
    ("op_105", "hof_105", "outcome_failed", 120, "researcher", {"reason": "artifact_missing"}),
    # op_106: accepted, some progress, then silence without a declared wait.
    ("op_106", "hof_106", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_106", "hof_106", "accepted", 5, "fact_checker", {}),
    ("op_106", "hof_106", "progress", 30, "fact_checker", {}),
    # op_107: retried handoff: attempt a orphaned, attempt b (new handoff id) accepted and working.
    ("op_107", "hof_107a", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_107", "hof_107b", "delegated", 200, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_107", "hof_107b", "accepted", 205, "fact_checker_2", {}),
    ("op_107", "hof_107b", "progress", 210, "fact_checker_2", {}),
    # op_109: two services accept the same handoff.
    ("op_109", "hof_109", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_109", "hof_109", "accepted", 4, "worker_a", {}),
    ("op_109", "hof_109", "accepted", 6, "worker_b", {}),
    # op_110: completion without acceptance.
    ("op_110", "hof_110", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_110", "hof_110", "completed", 50, "fact_checker", {}),
    # op_111: acceptance recorded a minute before its delegation (cannot be reconciled).
    ("op_111", "hof_111", "accepted", 0, "fact_checker", {}),
    ("op_111", "hof_111", "delegated", 60, "researcher", {"expected_artifact": "fact_check_report"}),
    # op_112: the worker names another artifact than the delegation promised.
    ("op_112", "hof_112", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}),
    ("op_112", "hof_112", "accepted", 3, "fact_checker", {"expected_artifact": "summary"}),
]

# op_108: authenticated writers. The delegation and acceptance come from principals that match their
# service; the verification claims service "researcher" but its token belongs to principal "intruder".
AUTHENTICATED = [
    ("op_108", "hof_108", "delegated", 0, "researcher", {"expected_artifact": "fact_check_report"}, "researcher"),
    ("op_108", "hof_108", "accepted", 3, "fact_checker", {}, "fact_checker"),
    ("op_108", "hof_108", "completed", 100, "fact_checker", {}, "fact_checker"),
    ("op_108", "hof_108", "outcome_verified", 110, "researcher", {}, "intruder"),
]


def _spans(rows):
    return [transition(op, hof, name, t, service=svc, **fields) for op, hof, name, t, svc, fields in rows]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("receipts") / "r.duckdb")
    s.ingest(request(_spans(SCENARIO)))
    for op, hof, name, t, svc, fields, principal in AUTHENTICATED:
        s.ingest(request(_spans([(op, hof, name, t, svc, fields)])), principal=principal)
    yield s
    s.close()


def state(store: Store, op: str, seconds: float, **windows: dt.timedelta) -> dict:
    named = "".join(f", {k} := ?" for k in windows)
    rows = store.dicts(
        f"SELECT * FROM receipt_state_at(?{named}) WHERE operation_id = ?", [at(seconds), *windows.values(), op]
    )
    assert len(rows) <= 1
    return rows[0] if rows else {}


# (operation, seconds after T0, expected state, expected waiting_for)
CASES = [
    # verified handoff: acknowledgement pending → working → waiting for verification → verified
    ("op_101", 1, "waiting", "acknowledgement"),
    ("op_101", 10, "working", None),
    ("op_101", 200, "working", None),
    ("op_101", 310, "waiting", "verification"),
    ("op_101", 400, "verified", None),
    ("op_101", 86_400, "verified", None),
    # never acknowledged: pending within the 120 s window, orphaned after, forever
    ("op_102", 60, "waiting", "acknowledgement"),
    ("op_102", 119, "waiting", "acknowledgement"),
    ("op_102", 121, "orphaned", None),
    ("op_102", 86_400, "orphaned", None),
    # legitimate wait: working before the wait, waiting after, still waiting two hours later
    ("op_103", 35, "working", None),
    ("op_103", 41, "waiting", "approval:fallback_source"),
    ("op_103", 7_200, "waiting", "approval:fallback_source"),
    # completion with no verified artifact: waiting for verification, then outcome_failed
    ("op_104", 50, "working", None),
    ("op_104", 150, "waiting", "verification"),
    ("op_104", 100 + 15 * 60 + 1, "outcome_failed", None),
    ("op_105", 110, "waiting", "verification"),
    ("op_105", 121, "outcome_failed", None),
    # silence without a declared wait: stuck once the progress window has passed
    ("op_106", 35, "working", None),
    ("op_106", 30 + 15 * 60 - 1, "working", None),
    ("op_106", 30 + 15 * 60 + 1, "stuck", None),
    # retried handoff
    ("op_107", 150, "orphaned", None),
    ("op_107", 201, "waiting", "acknowledgement"),
    ("op_107", 206, "working", None),
    ("op_107", 86_400, "stuck", None),
    # untrusted writer: fine until the untrusted verification arrives, uncertain from then on
    ("op_108", 50, "working", None),
    ("op_108", 105, "waiting", "verification"),
    ("op_108", 111, "uncertain", None),
    ("op_108", 86_400, "uncertain", None),
    # contradictory records
    ("op_109", 5, "working", None),
    ("op_109", 7, "uncertain", None),
    ("op_109", 86_400, "uncertain", None),
    ("op_110", 10, "waiting", "acknowledgement"),
    ("op_110", 51, "uncertain", None),
    ("op_111", 30, "uncertain", None),
    ("op_111", 90, "uncertain", None),
    ("op_112", 2, "waiting", "acknowledgement"),
    ("op_112", 4, "uncertain", None),
]


@pytest.mark.parametrize(("op", "seconds", "expected", "waiting_for"), CASES)
def test_state_at_each_timestamp(store, op, seconds, expected, waiting_for):
    row = state(store, op, seconds)
    assert row["state"] == expected, row
    assert row["waiting_for"] == waiting_for, row
    assert row["why"]


def test_nothing_before_the_first_transition(store):
    assert state(store, "op_101", -1) == {}


def test_reasons_say_why(store):
    assert "not accepted within 00:02:00" in state(store, "op_102", 121)["why"]
    assert state(store, "op_103", 7_200)["why"].startswith("waiting for approval:fallback_source since")
    assert "no verification within 00:02:00" in state(store, "op_104", 100 + 120 + 1)["why"]  # default window
    assert state(store, "op_105", 121)["why"].endswith(": artifact_missing")
    assert "no progress since 2026-01-01T10:00:30.000Z" in state(store, "op_106", 3_600)["why"]
    assert "untrusted writer (researcher as principal intruder)" in state(store, "op_108", 111)["why"]
    assert "more than one service (worker_a, worker_b)" in state(store, "op_109", 7)["why"]
    assert "without acceptance" in state(store, "op_110", 51)["why"]
    assert "no delegation" in state(store, "op_111", 30)["why"]
    assert "before its delegation" in state(store, "op_111", 90)["why"]
    assert "expected artifact differs" in state(store, "op_112", 4)["why"]


def test_ack_latency(store):
    row = state(store, "op_101", 400)
    assert row["ack_latency_s"] == 3.0
    assert row["ack_latency"] == dt.timedelta(seconds=3)
    assert state(store, "op_102", 400)["ack_latency_s"] is None
    assert state(store, "op_107", 300)["ack_latency_s"] == 5.0  # the current attempt's


def test_retried_handoff_keeps_the_old_attempt(store):
    row = state(store, "op_107", 206)
    assert row["attempts"] == 2
    assert row["current_handoff_id"] == "hof_107b"
    assert row["handoff_ids"] == ["hof_107a", "hof_107b"]
    attempts = store.dicts(
        "SELECT handoff_id, state FROM receipt_attempts_at(?) WHERE operation_id = 'op_107' ORDER BY handoff_id",
        [at(206)],
    )
    assert attempts == [{"handoff_id": "hof_107a", "state": "orphaned"}, {"handoff_id": "hof_107b", "state": "working"}]
    history = store.rows(
        "SELECT handoff_id, transition FROM receipt_transitions WHERE operation_id = 'op_107' ORDER BY time"
    )
    assert history == [
        ("hof_107a", "delegated"),
        ("hof_107b", "delegated"),
        ("hof_107b", "accepted"),
        ("hof_107b", "progress"),
    ]


def test_transitions_keep_writer_identity_and_trust(store):
    rows = store.dicts(
        "SELECT transition, service_name, principal, trust FROM receipt_transitions WHERE operation_id = 'op_108'"
        " ORDER BY time"
    )
    assert [(r["transition"], r["service_name"], r["principal"], r["trust"]) for r in rows] == [
        ("delegated", "researcher", "researcher", "trusted"),
        ("accepted", "fact_checker", "fact_checker", "trusted"),
        ("completed", "fact_checker", "fact_checker", "trusted"),
        ("outcome_verified", "researcher", "intruder", "untrusted"),
    ]
    unauthenticated = store.rows("SELECT DISTINCT trust FROM receipt_transitions WHERE operation_id = 'op_101'")
    assert unauthenticated == [("unchecked",)]


def test_windows_are_parameters(store):
    assert state(store, "op_102", 60, ack_window=dt.timedelta(seconds=30))["state"] == "orphaned"
    assert state(store, "op_106", 100, progress_window=dt.timedelta(seconds=60))["state"] == "stuck"
    assert state(store, "op_104", 200, verification_window=dt.timedelta(seconds=60))["state"] == "outcome_failed"


def test_views_are_as_of_now(store):
    now = {r["operation_id"]: r["state"] for r in store.dicts("SELECT operation_id, state FROM receipt_state")}
    assert now["op_101"] == "verified"
    assert now["op_102"] == "orphaned"
    assert now["op_103"] == "waiting"
    assert "evaluated_at" not in store.dicts("SELECT * FROM receipt_state LIMIT 1")[0]
    assert store.rows("SELECT count(*) FROM receipt_attempts") == [(13,)]


def test_trust_mapping_makes_a_principal_trusted(tmp_path):
    s = Store(tmp_path / "trust.duckdb")
    try:
        for op, hof, name, t, svc, fields, principal in AUTHENTICATED:
            s.ingest(request(_spans([(op, hof, name, t, svc, fields)])), principal=principal)
        assert state(s, "op_108", 200)["state"] == "uncertain"
        # "intruder" is in fact the verification service, allowed to speak for "researcher".
        s.write(lambda con: write_trust(con, "intruder", "researcher", True, "ops", "verifier runs as researcher"))
        assert state(s, "op_108", 200)["state"] == "verified"
        # A principal with a mapping is held to it: "researcher" may no longer write as itself only if mapped.
        s.write(lambda con: write_trust(con, "researcher", "planner", True, "ops"))
        assert state(s, "op_108", 200)["state"] == "uncertain"
        s.write(lambda con: write_trust(con, "researcher", "researcher", True, "ops"))
        assert state(s, "op_108", 200)["state"] == "verified"
        # Revoking: the latest row wins.
        s.write(lambda con: write_trust(con, "intruder", "researcher", False, "ops", "rotated"))
        assert state(s, "op_108", 200)["state"] == "uncertain"
        s.write(lambda con: write_trust(con, "intruder", "*", True, "ops", "gateway"))
        assert state(s, "op_108", 200)["state"] == "verified"
        assert s.rows("SELECT count(*) FROM trusted_writers") == [(5,)]
    finally:
        s.close()


def test_duplicated_spans_change_nothing(tmp_path):
    once = Store(tmp_path / "once.duckdb")
    twice = Store(tmp_path / "twice.duckdb")
    try:
        spans = _spans(SCENARIO)
        once.ingest(request(spans))
        twice.ingest(request(list(reversed(spans))))
        twice.ingest(request(spans))  # absorbed on insert
        # The same spans again with another end time are stored a second time: the views must not care.
        twice.ingest(request([{**sp, "end": sp["end"] + 1} for sp in spans]))
        assert twice.rows("SELECT count(*) FROM spans") == [(2 * len(spans),)]
        assert twice.rows("SELECT count(*) FROM receipt_transitions") == [(len(spans),)]
        for seconds in (1, 121, 206, 3_600):
            sql = "SELECT * EXCLUDE (evaluated_at) FROM receipt_state_at(?) ORDER BY operation_id"
            assert once.rows(sql, [at(seconds)]) == twice.rows(sql, [at(seconds)])
    finally:
        once.close()
        twice.close()


# Third-party spans mapped onto transitions (docs/views-evidence.md, "Third-party receipts"): A2A task spans and
# framework handoff spans, as (span name, seconds after T0, service, attributes, duration, in error).
A2A_STATE = "a2a.task.state"
THIRD_PARTY = [
    # task_1: submitted by the client, worked on, then input required → waiting
    ("message/send", 0, "client", {"a2a.task.id": "task_1", A2A_STATE: "TASK_STATE_SUBMITTED"}, 0.0, False),
    ("tasks/working", 4, "server", {"a2a.task.id": "task_1", A2A_STATE: "TASK_STATE_WORKING"}, 0.0, False),
    ("tasks/input", 30, "server", {"a2a.task.id": "task_1", A2A_STATE: "input-required"}, 0.0, False),
    # task_2: submitted, never worked on → orphaned after the acknowledgement window
    ("message/send", 0, "client", {"a2a.task.id": "task_2", A2A_STATE: "submitted"}, 0.0, False),
    # task_3: worked and completed with no verification → the outcome rule
    ("message/send", 0, "client", {"a2a.task.id": "task_3", A2A_STATE: "submitted"}, 0.0, False),
    ("tasks/working", 2, "server", {"a2a.task.id": "task_3", A2A_STATE: "working"}, 0.0, False),
    ("tasks/done", 50, "server", {"a2a.task.id": "task_3", A2A_STATE: "completed"}, 0.0, False),
    # task_4: rejected by the server
    ("message/send", 0, "client", {"a2a.task.id": "task_4", A2A_STATE: "TASK_STATE_REJECTED"}, 0.0, False),
    # OpenInference handoff span (OpenAI Agents) and an OpenLLMetry one in error
    ("handoff to weather_agent", 0, "agents", {"openinference.span.kind": "TOOL"}, 1.0, False),
    ("handoff", 0, "agents", {"traceloop.span.kind": "handoff", "gen_ai.handoff.to_agent": "billing"}, 1.0, True),
]


def _third_party_spans() -> list[dict]:
    from opentelemetry.proto.trace.v1 import trace_pb2

    from tests.derived_evidence.support import span

    out = []
    for name, t, svc, attrs, duration, failed in THIRD_PARTY:
        sp = span(name, attrs, t=t, service=svc, duration_s=duration)
        sp["status"] = trace_pb2.Status.STATUS_CODE_ERROR if failed else None
        out.append(sp)
    return out


def _ingest_third_party(s: Store, spans: list[dict]) -> None:
    req = request(spans)
    failed = {sp["span_id"] for sp in spans if sp.get("status")}
    for rs in req.resource_spans:
        for sp in rs.scope_spans[0].spans:
            if sp.span_id in failed:
                sp.status.code = 2  # STATUS_CODE_ERROR
    s.ingest(req)


def test_third_party_spans_answer_receipt_state(tmp_path):
    s = Store(tmp_path / "third.duckdb")
    try:
        _ingest_third_party(s, _third_party_spans())
        states = {
            r["operation_id"]: (r["state"], r["waiting_for"], r["source"])
            # a window longer than the default 120 s, so the completions are still awaiting verification at 200 s
            for r in s.dicts("SELECT * FROM receipt_state_at(?, verification_window := INTERVAL 15 MINUTE)", [at(200)])
        }
        handoff_ops = sorted(k for k in states if k.startswith("handoff:"))
        assert len(handoff_ops) == 2
        assert {k: v for k, v in states.items() if not k.startswith("handoff:")} == {
            "task_1": ("waiting", "input", "a2a"),
            "task_2": ("orphaned", None, "a2a"),
            "task_3": ("waiting", "verification", "a2a"),
            "task_4": ("outcome_failed", None, "a2a"),
        }
        assert sorted(states[k] for k in handoff_ops) == [
            ("outcome_failed", None, "handoff_span"),
            ("waiting", "verification", "handoff_span"),
        ]
        # completed with no verification: the outcome rule after the verification window
        later = {r["operation_id"]: r["state"] for r in s.dicts("SELECT * FROM receipt_state_at(?)", [at(3_600)])}
        assert later["task_3"] == "outcome_failed"
        assert later["task_1"] == "waiting"
        targets = s.rows(
            "SELECT target, list_sort(list(transition)) FROM receipt_transitions WHERE source = 'handoff_span' "
            "GROUP BY target ORDER BY target"
        )
        assert targets == [
            ("billing", ["accepted", "delegated", "outcome_failed"]),
            ("weather_agent", ["accepted", "completed", "delegated"]),
        ]
        why = s.rows("SELECT why FROM receipt_state_at(?) WHERE operation_id = 'task_4'", [at(200)])[0][0]
        assert "rejected" in why
    finally:
        s.close()


def test_third_party_receipts_ignore_redelivery_and_order(tmp_path):
    once = Store(tmp_path / "once.duckdb")
    twice = Store(tmp_path / "twice.duckdb")
    try:
        spans = _third_party_spans()
        _ingest_third_party(once, spans)
        _ingest_third_party(twice, list(reversed(spans)))
        _ingest_third_party(twice, spans)
        _ingest_third_party(twice, [{**sp, "end": sp["end"] + 1} for sp in spans])
        for seconds in (1, 121, 3_600):
            sql = "SELECT * EXCLUDE (evaluated_at) FROM receipt_state_at(?) ORDER BY operation_id"
            assert once.rows(sql, [at(seconds)]) == twice.rows(sql, [at(seconds)])
        assert once.rows("SELECT count(*) FROM receipt_transitions") == twice.rows(
            "SELECT count(*) FROM receipt_transitions"
        )
    finally:
        once.close()
        twice.close()
