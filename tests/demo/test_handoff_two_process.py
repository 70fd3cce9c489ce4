"""Issue 3 §4: a handoff across two OS processes over a real receiver.

This test is the delegator; the worker is the demo's (``python -m otel_agent.demo.worker``), with its own
TracerProvider and OTLP exporter to the same receiver. It accepts, records waiting and then blocks on the
approval with its work span (and its run span) open. Meanwhile the test reads the live receiver's store
through ``run_sql`` (the receiver's query API, found through ``<db>.receiver.json``): the delegated,
accepted and waiting transitions are committed, the accepted span links to the delegating span, and the
work span is not there yet — it is still running. Then the worker is approved and completes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import otel_agent.instrument as oi
from otel_agent.demo import content as C
from otel_agent.demo.channel import WorkerProcess
from otel_agent.demo.runner import worker_job
from otel_agent.demo.telemetry import make_provider, otlp_exporter
from otel_agent.query.client import live_receiver, run_sql
from otel_agent.server.receiver import Receiver
from tests.conftest import wait_until

KIND = "attributes->>'otel_agent.record.kind'"
HANDOFF_SPANS = f"""
SELECT name, {KIND} AS record_kind, attributes->>'otel_agent.receipt.transition' AS transition,
       trace_id, span_id, service_name, resource_attributes->>'process.pid' AS pid,
       epoch_ns(start_time) AS start_ns, epoch_ns(end_time) AS end_ns
FROM spans WHERE attributes->>'otel_agent.receipt.handoff_id' = ? ORDER BY start_ns
"""
LINKS = """
SELECT l.trace_id, l.span_id, l.linked_trace_id, l.linked_span_id, l.attributes
FROM span_links l WHERE l.attributes->>'otel_agent.receipt.handoff_id' = ?
"""


def handoff_spans(db: str, handoff_id: str) -> list[dict]:
    result = run_sql(HANDOFF_SPANS, [db], params=[handoff_id])
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def test_transitions_land_in_duckdb_while_the_workers_long_span_is_open(
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver()
    db = receiver.config.db
    assert live_receiver(db) == receiver.http_address  # run_sql below goes through the live receiver
    provider = make_provider("handoff-test-delegator", otlp_exporter(receiver.grpc_address))
    try:
        with oi.use_tracer_provider(provider), oi.flow_run("handoff_test", run_id="run_handoff_test"):
            delegation = oi.delegate("fact_check_report", operation_id="op_handoff_test", target="fact_checker")
            assert oi.flush()
        carrier = delegation.carrier
        assert set(carrier) <= {"traceparent", "tracestate", "otel-agent-operation-id", "otel-agent-handoff-id"}
        hid = delegation.handoff_id
        _, delegating_trace, delegating_span, _ = carrier["traceparent"].split("-")

        job = worker_job(
            carrier, "artv_subject_1", "fact_check_report", {"mode": "otlp", "endpoint": receiver.grpc_address}
        )
        worker = WorkerProcess(job, timeout_s=60)
        try:
            accepted = worker.expect("accepted")
            assert accepted["handoff_id"] == hid
            assert accepted["pid"] == worker.pid != os.getpid()
            worker.expect("waiting")  # the worker is blocked on the approval now: its work span stays open

            # While the work runs: every transition so far is committed and readable.
            spans = wait_until(lambda: len(found := handoff_spans(db, hid)) >= 4 and found, "four transitions")
            assert worker.proc.poll() is None
            assert [s["transition"] for s in spans] == ["delegated", "accepted", "progress", "waiting"]
            assert [s["record_kind"] for s in spans] == ["receipt_transition"] * 4
            delegated, accepted_span = spans[0], spans[1]
            assert (delegated["trace_id"], delegated["span_id"]) == (delegating_trace, delegating_span)
            assert delegated["service_name"] == "handoff-test-delegator"
            assert delegated["pid"] == str(os.getpid())
            for s in spans[1:]:
                assert s["service_name"] == C.WORKER_SERVICE
                assert s["pid"] == str(worker.pid)
                assert s["trace_id"] != delegating_trace  # the worker's work is its own trace, linked
            # ...and the accepted span's link points at the delegating span.
            links = run_sql(LINKS, [db], params=[hid]).rows
            assert len(links) == 1
            trace_id, span_id, linked_trace, linked_span, link_attrs = links[0]
            assert (trace_id, span_id) == (accepted_span["trace_id"], accepted_span["span_id"])
            assert (linked_trace, linked_span) == (delegating_trace, delegating_span)
            link_attrs = json.loads(link_attrs) if isinstance(link_attrs, str) else link_attrs
            assert link_attrs["otel_agent.link.type"] == "handoff"
            assert link_attrs["otel_agent.receipt.operation_id"] == "op_handoff_test"
            # The long spans have not ended, so they are not in the store yet; the worker's run was announced
            # when it started (a pending span), so it is listed as running
            open_spans = run_sql(
                f"SELECT attributes->>'logfire.span_type', count(*) FROM spans "
                f"WHERE {KIND} IN ('handoff_work', 'flow_run') AND service_name = ? GROUP BY 1",
                [db],
                params=[C.WORKER_SERVICE],
            ).rows
            assert open_spans == [("pending_span", 1)]
            running = run_sql("SELECT status FROM runs WHERE run_id = ?", [db], params=[C.WORKER_RUN_ID]).rows
            assert running == [("running",)]

            worker.send({"approval": "granted"})
            done = worker.expect("completed")
            assert done["artifact_ref"] == C.FACT_CHECK_VERSION_ID
            assert worker.finish() == 0
        except BaseException:
            worker.kill()
            raise
        delegation.verified("artifact_checked")
        assert provider.force_flush()
    finally:
        provider.shutdown()

    spans = handoff_spans(db, hid)
    assert [s["transition"] for s in spans if s["record_kind"] == "receipt_transition"] == [
        "delegated",
        "accepted",
        "progress",
        "waiting",
        "progress",
        "completed",
        "outcome_verified",
    ]
    [work] = [s for s in spans if s["record_kind"] == "handoff_work"]
    waited_at = next(s for s in spans if s["transition"] == "waiting")["start_ns"]
    completed_at = next(s for s in spans if s["transition"] == "completed")["start_ns"]
    assert work["start_ns"] < waited_at < completed_at <= work["end_ns"]
    assert work["end_ns"] - waited_at >= 200_000_000  # it stayed open across the checks above
    links = {(r[0], r[1]): (r[2], r[3]) for r in run_sql(LINKS, [db], params=[hid]).rows}
    assert links[(work["trace_id"], work["span_id"])] == (delegating_trace, delegating_span)
    assert len(links) == 2  # the work span and the accepted transition
