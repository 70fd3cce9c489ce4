"""Order and duplication do not matter: the demo-like spans sent shuffled, split into many requests and partly
re-sent give every run view exactly the rows that sending them once, in order, gives."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest
import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from otel_agent.server.receiver import Receiver
from tests.conftest import rows
from tests.derived_runs.runs_support import RUN_VIEWS
from tests.derived_runs.scenario import demo_spans


def post(receiver: Receiver, spans: Sequence[ReadableSpan]) -> None:
    resp = requests.post(
        receiver.http_address + "/v1/traces",
        data=encode_spans(list(spans)).SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=30,
    )
    assert resp.status_code == 200, resp.text


def _stable(value: object) -> object:
    """Doubles to 12 significant digits: a sum of costs may differ in its last bit with the summation order."""
    return float(f"{value:.12g}") if isinstance(value, float) else value


def snapshot(receiver: Receiver) -> dict[str, list[tuple]]:
    return {
        view: [tuple(_stable(v) for v in row) for row in rows(receiver, f"SELECT * FROM {view} ORDER BY ALL")]
        for view in RUN_VIEWS
    }


def delivered_twice(
    make_receiver: Callable[..., Receiver], spans: Sequence[ReadableSpan], deliveries: list[list[ReadableSpan]]
) -> tuple[Receiver, Receiver]:
    """Two receivers over fresh stores: one sent ``spans`` once, in order, in one request; the other sent each
    of ``deliveries`` (shuffled, split, re-sent parts of ``spans``) as a request of its own."""
    in_order = make_receiver()
    post(in_order, spans)
    redelivered = make_receiver()
    for chunk in deliveries:
        post(redelivered, chunk)
    return in_order, redelivered


def shuffled(spans: Sequence[ReadableSpan], rnd: random.Random) -> list[ReadableSpan]:
    order = list(spans)
    rnd.shuffle(order)
    return order


@pytest.mark.parametrize("seed", [1, 2])
def test_shuffled_split_and_duplicated_delivery_gives_the_same_views(
    make_receiver: Callable[..., Receiver], seed: int
) -> None:
    spans = demo_spans(runs=("run_demo_research", "run_demo_second"))
    rnd = random.Random(seed)
    order = shuffled(spans, rnd)
    chunks: list[list[ReadableSpan]] = []
    i = 0
    while i < len(order):
        n = rnd.randint(1, 4)
        chunks.append(order[i : i + n])
        i += n
    resend = rnd.sample(chunks, k=len(chunks) // 2)  # half of the requests arrive twice
    extra = [[s] for s in rnd.sample(order, k=len(order) // 3)]  # and some spans once more, alone
    deliveries = chunks + resend + extra
    rnd.shuffle(deliveries)
    in_order, redelivered = delivered_twice(make_receiver, spans, deliveries)

    expected = snapshot(in_order)
    assert expected["runs"]
    assert expected["provider_calls"]
    assert expected["run_timeline"]
    assert snapshot(redelivered) == expected


def third_party_spans() -> list[ReadableSpan]:
    """Third-party spans exercising the fidelity rules: a conversation, 2026 operations, nested duplicates, an
    error known only from its exception event, a child trace linked to the run (a roll-up)."""
    from opentelemetry import context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Link, Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("openinference.instrumentation.tests")

    def chat(tokens: int, **extra: object) -> object:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "langchain",
                      "gen_ai.request.model": "gpt-4o-mini-2024-07-18", "gen_ai.usage.input_tokens": tokens,
                      "gen_ai.usage.output_tokens": 10, **extra}  # fmt: skip
        return tracer.start_as_current_span("chat", attributes=attributes)

    for n in range(2):
        root_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-1"}
        with tracer.start_as_current_span(f"invoke_agent agent_{n}", attributes=root_attrs) as root:
            with tracer.start_as_current_span("plan", attributes={"gen_ai.operation.name": "plan"}) as plan:
                ctx = plan.get_span_context()
                with chat(100 + n):
                    pass
            outer = {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.id": f"doc{n}"}
            with (
                tracer.start_as_current_span("outer", attributes=outer),
                tracer.start_as_current_span("inner", attributes={"openinference.span.kind": "RETRIEVER"}),
            ):
                pass
            with tracer.start_as_current_span("search_memory", attributes={"gen_ai.operation.name": "search_memory",
                                              "gen_ai.memory.store.id": "m"}):  # fmt: skip
                pass
            with tracer.start_as_current_span("execute_tool t", attributes={"gen_ai.operation.name": "execute_tool",
                                              "gen_ai.tool.name": "t"}) as tool:  # fmt: skip
                tool.record_exception(KeyError("boom"))
                tool.set_status(Status(StatusCode.ERROR))
            root.set_status(Status(StatusCode.ERROR))
        worker = {"gen_ai.operation.name": "invoke_agent"}
        with (
            tracer.start_as_current_span(
                "invoke_agent worker", context=context.Context(), links=[Link(ctx)], attributes=worker
            ),
            chat(300),
        ):
            pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


@pytest.mark.parametrize("seed", [3])
def test_third_party_views_ignore_order_and_redelivery(make_receiver: Callable[..., Receiver], seed: int) -> None:
    spans = third_party_spans()
    rnd = random.Random(seed)
    order = shuffled(spans, rnd)
    deliveries = [order[i : i + 3] for i in range(0, len(order), 3)] + [rnd.sample(order, k=len(order) // 2)]
    in_order, redelivered = delivered_twice(make_receiver, spans, deliveries)
    expected = snapshot(in_order)
    assert len(expected["sessions"]) == 1
    assert len(expected["memory_operations"]) == 2
    assert [r for r in expected["run_rollups"] if r[2]]  # a run with delegated work
    assert snapshot(redelivered) == expected
    docs = "SELECT run_id, document_id FROM retrieval_documents ORDER BY ALL"
    assert rows(redelivered, docs) == rows(in_order, docs)
    assert len(rows(in_order, docs)) == 2
