"""Handoff receipts: carrier contents, transitions as prompt zero-length spans, accept() link, asyncio tasks."""

from __future__ import annotations

import asyncio

import pytest
from instrument_support import Spans, parent_id, span_id
from opentelemetry import baggage, context, propagate
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A

ALLOWED_KEYS = {"traceparent", "tracestate", A.CARRIER_OPERATION_ID, A.CARRIER_HANDOFF_ID}


def transitions(spans: Spans) -> list[ReadableSpan]:
    return spans.kind("receipt_transition")


def test_delegate_records_a_producer_span_and_returns_a_minimal_carrier(spans: Spans) -> None:
    with oi.flow_run("deep_research", run_id="r"), oi.step("fact_check_handoff") as st:
        d = oi.delegate("fact_check_report", operation_id="op_101", target="fact_checker", reason="needs_check")
    (delegated,) = transitions(spans)
    assert delegated.name == "otel_agent.receipt.delegated"
    assert delegated.kind is SpanKind.PRODUCER
    assert parent_id(delegated) == span_id(spans.one("step"))
    assert dict(delegated.attributes) == {
        A.RECORD_KIND: "receipt_transition",
        A.RUN_ID: "r",
        A.STEP_ID: st.step_id,
        A.RECEIPT_OPERATION_ID: "op_101",
        A.RECEIPT_HANDOFF_ID: d.handoff_id,
        A.RECEIPT_TRANSITION: "delegated",
        A.RECEIPT_EXPECTED_ARTIFACT: "fact_check_report",
        A.RECEIPT_REASON: "needs_check",
        A.RECEIPT_TARGET: "fact_checker",
    }
    assert set(d.carrier) == {"traceparent", A.CARRIER_OPERATION_ID, A.CARRIER_HANDOFF_ID}
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in d.carrier.items())
    assert d.carrier[A.CARRIER_OPERATION_ID] == "op_101"
    assert d.carrier[A.CARRIER_HANDOFF_ID] == d.handoff_id
    ctx = delegated.context
    assert d.carrier["traceparent"] == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    # nothing of the expected artifact, target, run, reason or any payload travels
    assert not any(x in "".join(d.carrier.values()) for x in ("fact_check_report", "fact_checker", "needs_check"))


def test_carrier_never_carries_baggage_even_with_a_baggage_propagator(spans: Spans) -> None:
    previous = propagate.get_global_textmap()
    propagate.set_global_textmap(CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()]))
    token = context.attach(baggage.set_baggage("user.email", "someone@example.org"))
    try:
        d = oi.delegate("report")
    finally:
        context.detach(token)
        propagate.set_global_textmap(previous)
    assert set(d.carrier) <= ALLOWED_KEYS
    assert "baggage" not in d.carrier


def test_tracestate_is_carried_when_present(spans: Spans) -> None:
    incoming = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "vendor=x"}
    token = context.attach(TraceContextTextMapPropagator().extract(incoming))
    try:
        d = oi.delegate("report")
    finally:
        context.detach(token)
    assert set(d.carrier) == ALLOWED_KEYS
    assert d.carrier["tracestate"] == "vendor=x"
    assert d.carrier["traceparent"].startswith("00-0af7651916cd43dd8448eb211c80319c-")


def test_accept_links_to_the_delegating_span_and_transitions_arrive_while_work_runs(spans: Spans) -> None:
    with oi.flow_run("deep_research"), oi.step("handoff"):
        d = oi.delegate("fact_check_report")
    delegated = transitions(spans)[0]

    with oi.accept(d.carrier, expected_artifact="fact_check_report") as work:
        assert work.linked_span_context.span_id == span_id(delegated)
        work.progress("sources_checked")
        work.waiting("approval:fallback_source", reason="source_unreachable")
        # The long work span is still open, yet every transition so far is already exported.
        assert [t.attributes[A.RECEIPT_TRANSITION] for t in transitions(spans)] == [
            "delegated",
            "accepted",
            "progress",
            "waiting",
        ]
        assert spans.kind("handoff_work") == []
        work.completed("artv_77")
    work.verified("checks_passed")

    w = spans.one("handoff_work")
    assert w.name == "otel_agent.handoff.work"
    assert w.kind is SpanKind.CONSUMER
    assert w.parent is None
    assert w.context.trace_id != delegated.context.trace_id
    for span in (w, spans.named("otel_agent.receipt.accepted")[0]):
        (link,) = span.links
        assert (link.context.trace_id, link.context.span_id) == (delegated.context.trace_id, span_id(delegated))
        assert dict(link.attributes) == {
            A.LINK_TYPE: "handoff",
            A.RECEIPT_OPERATION_ID: d.operation_id,
            A.RECEIPT_HANDOFF_ID: d.handoff_id,
        }
    by_name = {t.attributes[A.RECEIPT_TRANSITION]: t for t in transitions(spans)}
    assert list(by_name) == ["delegated", "accepted", "progress", "waiting", "completed", "outcome_verified"]
    for name, t in by_name.items():
        assert t.attributes[A.RECEIPT_OPERATION_ID] == d.operation_id
        assert t.attributes[A.RECEIPT_HANDOFF_ID] == d.handoff_id
        assert t.attributes[A.RECEIPT_EXPECTED_ARTIFACT] == "fact_check_report"
        assert t.end_time - t.start_time < 50_000_000  # zero-length record, not a long span
        if name in ("accepted", "progress", "waiting", "completed"):
            assert parent_id(t) == span_id(w)
    assert by_name["waiting"].attributes[A.RECEIPT_WAITING_FOR] == "approval:fallback_source"
    assert by_name["waiting"].attributes[A.RECEIPT_REASON] == "source_unreachable"
    assert by_name["completed"].attributes[A.RECEIPT_ARTIFACT_REF] == "artv_77"
    assert by_name["outcome_verified"].attributes[A.RECEIPT_REASON] == "checks_passed"
    assert by_name["progress"].attributes[A.RECEIPT_REASON] == "sources_checked"


def test_worker_inside_its_own_run_nests_the_work_span(spans: Spans) -> None:
    d = oi.delegate("report")
    with oi.flow_run("worker", run_id="w_run") as run, oi.accept(d.carrier):
        pass
    w = spans.one("handoff_work")
    assert parent_id(w) == span_id(spans.one("flow_run"))
    assert w.attributes[A.RUN_ID] == run.run_id
    assert A.RECEIPT_EXPECTED_ARTIFACT not in w.attributes  # the worker did not name it


def test_outcome_failed_needs_a_bounded_code_and_verifier_can_record_from_the_carrier(spans: Spans) -> None:
    d = oi.delegate("evidence_bundle")
    receipt = oi.receipt_from_carrier(d.carrier, expected_artifact="evidence_bundle")
    with pytest.raises(oi.ReceiptError):
        receipt.failed(None)  # type: ignore[arg-type]
    with pytest.raises(oi.ReceiptError):
        receipt.failed("the model said the file is at /etc/passwd and it was missing")
    receipt.failed("artifact_missing")
    failed = transitions(spans)[-1]
    assert failed.attributes[A.RECEIPT_TRANSITION] == "outcome_failed"
    assert failed.attributes[A.RECEIPT_REASON] == "artifact_missing"
    assert failed.attributes[A.RECEIPT_HANDOFF_ID] == d.handoff_id


def test_waiting_requires_a_named_dependency(spans: Spans) -> None:
    with oi.accept(oi.delegate("r").carrier) as work:
        with pytest.raises(oi.ReceiptError):
            work.waiting("")
        with pytest.raises(oi.ReceiptError):
            work.completed("../out/report.md")  # paths are not opaque refs


def test_retry_mints_a_new_handoff_id_for_the_same_operation(spans: Spans) -> None:
    first = oi.delegate("report", target="worker_a")
    second = first.retry(reason="not_acknowledged")
    assert second.operation_id == first.operation_id
    assert second.handoff_id != first.handoff_id
    assert second.target == "worker_a"
    assert second.expected_artifact == "report"
    d1, d2 = transitions(spans)
    assert d1.attributes[A.RECEIPT_HANDOFF_ID] == first.handoff_id
    assert d2.attributes[A.RECEIPT_HANDOFF_ID] == second.handoff_id
    assert d2.attributes[A.RECEIPT_REASON] == "not_acknowledged"


@pytest.mark.parametrize(
    "carrier",
    [
        "traceparent=00-...",
        {A.CARRIER_HANDOFF_ID: "hof_1"},
        {A.CARRIER_OPERATION_ID: "op_1"},
        {A.CARRIER_OPERATION_ID: "op_1", A.CARRIER_HANDOFF_ID: 7},
        {A.CARRIER_OPERATION_ID: "/tmp/op", A.CARRIER_HANDOFF_ID: "hof_1"},
        {A.CARRIER_OPERATION_ID: "op_1", A.CARRIER_HANDOFF_ID: "hof_1", "traceparent": "garbage"},
    ],
)
def test_bad_carriers_are_rejected(carrier: object) -> None:
    with pytest.raises(oi.CarrierError):
        oi.accept(carrier)  # type: ignore[arg-type]


def test_untraced_delegator_still_hands_off_without_a_link(spans: Spans) -> None:
    carrier = {A.CARRIER_OPERATION_ID: "op_1", A.CARRIER_HANDOFF_ID: "hof_1", "x-unknown": "ignored"}
    with oi.accept(carrier, expected_artifact="report") as work:
        assert work.linked_span_context is None
    assert spans.one("handoff_work").links == ()
    accepted = transitions(spans)[0]
    assert accepted.links == ()
    assert accepted.attributes[A.RECEIPT_HANDOFF_ID] == "hof_1"
    assert "x-unknown" not in str(dict(accepted.attributes))


def test_opaque_ids_are_enforced() -> None:
    with pytest.raises(oi.ReceiptError):
        oi.delegate("report", operation_id="op with spaces")
    with pytest.raises(oi.ReceiptError):
        oi.delegate("reports/2026/q1.md")


def test_concurrent_handoffs_across_asyncio_tasks(spans: Spans) -> None:
    async def delegator(name: str) -> oi.Delegation:
        async with oi.flow_run(name), oi.step("handoff"):
            await asyncio.sleep(0.005)
            return oi.delegate(f"{name}_report")

    async def worker(carrier: dict[str, str], artifact: str) -> tuple[str, str]:
        async with oi.accept(carrier, expected_artifact=artifact) as work:
            await asyncio.sleep(0.005)  # interleave with the other worker
            work.waiting("approval:human")
            await asyncio.sleep(0.005)
            work.completed()
        work.verified()
        return work.operation_id, work.handoff_id

    async def main() -> tuple[list[oi.Delegation], list[tuple[str, str]]]:
        delegations = await asyncio.gather(delegator("a"), delegator("b"))
        results = await asyncio.gather(
            *(asyncio.create_task(worker(d.carrier, d.expected_artifact)) for d in delegations)
        )
        return delegations, results

    delegations, results = asyncio.run(main())
    assert [(d.operation_id, d.handoff_id) for d in delegations] == results
    delegated = {t.attributes[A.RECEIPT_HANDOFF_ID]: t for t in transitions(spans) if t.kind is SpanKind.PRODUCER}
    works = {w.attributes[A.RECEIPT_HANDOFF_ID]: w for w in spans.kind("handoff_work")}
    assert set(delegated) == set(works) == {d.handoff_id for d in delegations}
    for d in delegations:
        work_span, delegated_span = works[d.handoff_id], delegated[d.handoff_id]
        assert work_span.links[0].context.span_id == span_id(delegated_span)
        assert work_span.attributes[A.RECEIPT_EXPECTED_ARTIFACT] == d.expected_artifact
        mine = [
            t.attributes[A.RECEIPT_TRANSITION]
            for t in transitions(spans)
            if t.attributes[A.RECEIPT_HANDOFF_ID] == d.handoff_id
        ]
        assert mine == ["delegated", "accepted", "waiting", "completed", "outcome_verified"]
        for t in transitions(spans):
            if t.attributes[A.RECEIPT_HANDOFF_ID] == d.handoff_id and t.attributes[A.RECEIPT_TRANSITION] in (
                "accepted",
                "waiting",
                "completed",
            ):
                assert parent_id(t) == span_id(work_span)


def test_flush_pushes_a_buffered_transition_out_now() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    try:
        with oi.use_tracer_provider(provider):
            d = oi.delegate("report")
            assert exporter.get_finished_spans() == ()  # buffered by the batch processor
            assert oi.flush() is True
        assert [s.name for s in exporter.get_finished_spans()] == ["otel_agent.receipt.delegated"]
        assert exporter.get_finished_spans()[0].attributes[A.RECEIPT_HANDOFF_ID] == d.handoff_id
    finally:
        provider.shutdown()


def test_given_handoff_ids_are_recorded_and_carried(spans: Spans) -> None:
    first = oi.delegate("report", operation_id="op_fixed", handoff_id="hof_fixed_1", target="worker_a")
    second = first.retry(reason="not_acknowledged", handoff_id="hof_fixed_2")
    assert (first.handoff_id, second.handoff_id) == ("hof_fixed_1", "hof_fixed_2")
    assert first.carrier[A.CARRIER_HANDOFF_ID] == "hof_fixed_1"
    assert second.carrier[A.CARRIER_HANDOFF_ID] == "hof_fixed_2"
    with oi.accept(second.carrier, expected_artifact="report") as work:
        assert work.handoff_id == "hof_fixed_2"
    d1, d2, accepted = transitions(spans)
    assert d1.attributes[A.RECEIPT_HANDOFF_ID] == "hof_fixed_1"
    assert d2.attributes[A.RECEIPT_HANDOFF_ID] == "hof_fixed_2"
    assert d2.attributes[A.RECEIPT_OPERATION_ID] == "op_fixed"
    assert d2.attributes[A.RECEIPT_TARGET] == "worker_a"
    assert accepted.attributes[A.RECEIPT_HANDOFF_ID] == "hof_fixed_2"
    assert spans.one("handoff_work").attributes[A.RECEIPT_HANDOFF_ID] == "hof_fixed_2"
    assert accepted.links[0].attributes[A.RECEIPT_HANDOFF_ID] == "hof_fixed_2"


def test_generated_handoff_ids_stay_unique_without_given_ones(spans: Spans) -> None:
    first = oi.delegate("report", operation_id="op_same")
    retries = [first.retry(), first.retry(handoff_id=None)]
    others = [oi.delegate("report", operation_id="op_same") for _ in range(3)]
    ids = [d.handoff_id for d in (first, *retries, *others)]
    assert len(set(ids)) == len(ids) == 6
    assert all(i.startswith("hof_") for i in ids)
    assert [t.attributes[A.RECEIPT_HANDOFF_ID] for t in transitions(spans)] == ids


@pytest.mark.parametrize("bad", ["", "hof with spaces", "../hof", "h" * 129, 7])
def test_given_handoff_ids_must_be_opaque(spans: Spans, bad: object) -> None:
    with pytest.raises(oi.ReceiptError):
        oi.delegate("report", handoff_id=bad)  # type: ignore[arg-type]
    d = oi.delegate("report", handoff_id="hof_ok")
    with pytest.raises(oi.ReceiptError):
        d.retry(handoff_id=bad)  # type: ignore[arg-type]
    assert [t.attributes[A.RECEIPT_HANDOFF_ID] for t in transitions(spans)] == ["hof_ok"]  # nothing else recorded


def test_a_retry_cannot_reuse_the_attempts_handoff_id(spans: Spans) -> None:
    d = oi.delegate("report", handoff_id="hof_once")
    with pytest.raises(oi.ReceiptError, match="new handoff id"):
        d.retry(handoff_id="hof_once")
    assert len(transitions(spans)) == 1
