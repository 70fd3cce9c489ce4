"""Property: the derived evidence model does not depend on how the data arrived. The research scenario (spans
built with the instrumentation helpers, encoded with the SDK's OTLP encoder) and the receipt scenario are sent
to a receiver once, in order, in one request; and to other receivers split into many requests, shuffled and
partly sent twice. Lineage, support, versions, reviews' targets and receipt states at every transition time
must be identical."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from tests.conftest import rows, start_receiver
from tests.derived_evidence.support import request
from tests.derived_evidence.test_receipts import SCENARIO, _spans
from tests.otlp_builders import post_traces

RELATIONS = [
    "sources",
    "evidence_items",
    "claims",
    "citations",
    "conflicts",
    "claim_support",
    "claim_lineage",
    "artifact_versions",
    "artifacts",
    "context_snapshots",
    "context_blocks",
    "context_compressions",
    "memory_proposals",
    "decisions",
    "badcases",
]


def post(receiver, payload: bytes) -> None:
    resp = post_traces(receiver.http_address, payload, timeout=30)
    assert resp.status_code == 200, resp.content


def payloads(research_spans, receipt_spans, chunks: list[tuple[str, list[int]]]) -> list[bytes]:
    out = []
    for source, idx in chunks:
        if source == "research":
            out.append(encode_spans([research_spans[i] for i in idx]).SerializeToString())
        else:
            out.append(request([receipt_spans[i] for i in idx]).SerializeToString())
    return out


def split(n: int, source: str, rnd: random.Random) -> list[tuple[str, list[int]]]:
    order = list(range(n))
    rnd.shuffle(order)
    chunks, i = [], 0
    while i < n:
        size = rnd.randint(1, 4)
        chunks.append((source, order[i : i + size]))
        i += size
    return chunks


def snapshot(receiver, as_of: list[dt.datetime]) -> dict[str, list[str]]:
    snap = {}
    for name in RELATIONS:
        snap[name] = [r[0] for r in rows(receiver, f"SELECT to_json(t)::VARCHAR FROM {name} t ORDER BY 1")]
    snap["receipt_transitions"] = [
        r[0]
        for r in rows(
            receiver,
            "SELECT to_json(t)::VARCHAR FROM (SELECT * EXCLUDE (received_at) FROM receipt_transitions) t ORDER BY 1",
        )
    ]
    for t in as_of:
        for macro in ("receipt_state_at", "receipt_attempts_at"):
            snap[f"{macro}({t})"] = [
                r[0] for r in rows(receiver, f"SELECT to_json(t)::VARCHAR FROM {macro}(?) t ORDER BY 1", [t])
            ]
    return snap


@pytest.fixture(scope="module")
def receipt_spans():
    return _spans(SCENARIO)


def transition_times(receiver) -> list[dt.datetime]:
    times = [r[0] for r in rows(receiver, "SELECT DISTINCT time FROM receipt_transitions ORDER BY 1")]
    return [*times, times[-1] + dt.timedelta(seconds=121), times[-1] + dt.timedelta(days=1)]


@pytest.fixture(scope="module")
def in_order(tmp_path_factory, research, receipt_spans) -> tuple[list[dt.datetime], dict[str, list[str]]]:
    """The transition times and the snapshot of a receiver sent everything once, in order, in one request each:
    the same for every seed, so taken once for the module (the tests only compare against it)."""
    receiver = start_receiver(tmp_path_factory.mktemp("in_order") / "s.duckdb")
    try:
        post(receiver, encode_spans(research.spans).SerializeToString())
        post(receiver, request(receipt_spans).SerializeToString())
        as_of = transition_times(receiver)
        want = snapshot(receiver, as_of)
    finally:
        receiver.stop()
    assert len(want["claim_lineage"]) == 8
    assert len(want["artifact_versions"]) == 2
    return as_of, want


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_and_duplicated_delivery_changes_nothing(make_receiver, research, receipt_spans, in_order, seed):
    rnd = random.Random(seed)
    as_of, want = in_order

    chunks = split(len(research.spans), "research", rnd) + split(len(receipt_spans), "receipts", rnd)
    rnd.shuffle(chunks)
    sent = chunks + rnd.sample(chunks, len(chunks) // 2)  # half of the requests arrive twice
    rnd.shuffle(sent)
    shuffled = make_receiver()
    for payload in payloads(research.spans, receipt_spans, sent):
        post(shuffled, payload)
    got = snapshot(shuffled, as_of)
    for name in want:
        assert got[name] == want[name], name
