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


@pytest.mark.parametrize("seed", [1, 2])
def test_shuffled_split_and_duplicated_delivery_gives_the_same_views(
    make_receiver: Callable[..., Receiver], seed: int
) -> None:
    spans = demo_spans(runs=("run_demo_research", "run_demo_second"))
    in_order = make_receiver()
    post(in_order, spans)

    rnd = random.Random(seed)
    shuffled = make_receiver()
    order = list(spans)
    rnd.shuffle(order)
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
    for chunk in deliveries:
        post(shuffled, chunk)

    expected = snapshot(in_order)
    assert expected["runs"] and expected["provider_calls"] and expected["run_timeline"]
    assert snapshot(shuffled) == expected
