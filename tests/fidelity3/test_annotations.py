"""Span annotations sent outside spans (issue 32): feedback and evaluations that Arize Phoenix's own client
(``phoenix.client.Client``, package arize-phoenix-client) posts to ``/v1/span_annotations`` — pointed at a real
receiver on loopback, with a bearer token as its API key — are stored as ``gen_ai.evaluation.result`` log records
and read by the ``evaluations`` view: attached to the annotated span by its id (the annotation names no trace),
also when the span arrives after it; an annotation with the same span, name and identifier replaces the earlier
one, as in Phoenix; hostile bodies are refused with one line and store nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import dict_rows, write_tokens_file
from tests.tools import needs_module

INGEST, READER = "annotations-ingest-token", "annotations-query-token"
EVALUATIONS = (
    "SELECT evaluation_name, score_value, score_label, explanation, joined_by, run_id, judged_category, "
    "annotator_kind, span_id FROM evaluations ORDER BY evaluation_name, annotator_kind"
)


@pytest.fixture
def receiver(make_receiver, tmp_path) -> Any:
    tokens = write_tokens_file(
        tmp_path / "tokens.json",
        {"token": INGEST, "principal": "feedback-service", "roles": ["ingest"]},
        {"token": READER, "principal": "analyst", "roles": ["query"]},
    )
    return make_receiver(tokens_file=tokens)


def send_run(receiver: Any) -> tuple[str, str]:
    """An agent run (invoke_agent → chat) through the OpenTelemetry SDK's OTLP/HTTP exporter; (trace id, the
    chat span's id)."""
    exporter = OTLPSpanExporter(
        endpoint=receiver.http_address + "/v1/traces", headers={"authorization": f"Bearer {INGEST}"}
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("annotated-agent")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"}
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
    }
    with (
        tracer.start_as_current_span("invoke_agent support_agent", attributes=agent) as root,
        tracer.start_as_current_span("chat gpt-4o-mini", attributes=chat) as call,
    ):
        ids = format(root.get_span_context().trace_id, "032x"), format(call.get_span_context().span_id, "016x")
    provider.shutdown()
    return ids


def phoenix_client(receiver: Any, token: str) -> Any:
    needs_module("phoenix.client")
    from phoenix.client import Client

    return Client(base_url=receiver.http_address, api_key=token)


def test_phoenix_span_annotations_are_evaluations_of_the_annotated_span(receiver: Any) -> None:
    trace_id, chat_span = send_run(receiver)
    client = phoenix_client(receiver, INGEST)
    judged = client.spans.add_span_annotation(
        span_id=chat_span, annotation_name="correctness", annotator_kind="LLM", label="correct", score=0.9,
        explanation="answers the question", sync=True,
    )  # fmt: skip
    assert judged is not None
    assert judged["id"]
    # a user's feedback, then the same user's changed mind (same span, name and identifier: it replaces the first)
    client.spans.log_span_annotations(
        span_annotations=[
            {"span_id": chat_span, "name": "thumbs", "annotator_kind": "HUMAN", "identifier": "user-7",
             "result": {"label": "down", "score": 0}, "metadata": {"channel": "web"}},
        ],
    )  # fmt: skip
    client.spans.add_span_annotation(
        span_id=chat_span, annotation_name="thumbs", label="up", score=1, identifier="user-7"
    )
    rows = dict_rows(receiver, EVALUATIONS)
    assert rows == [
        {
            "evaluation_name": "correctness",
            "score_value": 0.9,
            "score_label": "correct",
            "explanation": "answers the question",
            "joined_by": "span_id",
            "run_id": trace_id,
            "judged_category": "provider_call",
            "annotator_kind": "LLM",
            "span_id": chat_span,
        },
        {
            "evaluation_name": "thumbs",
            "score_value": 1.0,
            "score_label": "up",
            "explanation": None,
            "joined_by": "span_id",
            "run_id": trace_id,
            "judged_category": "provider_call",
            "annotator_kind": "HUMAN",
            "span_id": chat_span,
        },
    ]
    # lossless: every annotation as sent is in the logs table, the replaced one too
    bodies = [
        json.loads(r["body"])
        for r in dict_rows(
            receiver, "SELECT body->>'$' AS body FROM logs WHERE event_name = 'gen_ai.evaluation.result' ORDER BY time"
        )
    ]
    assert [(b["name"], b["result"].get("label")) for b in bodies] == [
        ("correctness", "correct"), ("thumbs", "down"), ("thumbs", "up")
    ]  # fmt: skip
    assert bodies[1]["metadata"] == {"channel": "web"}


def test_an_annotation_sent_before_its_span_attaches_when_the_span_arrives(receiver: Any) -> None:
    early = "00f067aa0ba902b7"
    client = phoenix_client(receiver, INGEST)
    client.spans.add_span_annotation(span_id=early, annotation_name="relevance", score=0.4)
    [row] = dict_rows(receiver, "SELECT span_id, trace_id, joined_by, run_id FROM evaluations")
    assert row == {"span_id": early, "trace_id": None, "joined_by": None, "run_id": None}  # nothing judged yet
    trace_id, chat_span = send_run(receiver)
    client.spans.add_span_annotation(span_id=chat_span, annotation_name="relevance", score=0.8)
    rows = dict_rows(receiver, "SELECT span_id, run_id, score_value FROM evaluations ORDER BY score_value")
    assert rows == [
        {"span_id": early, "run_id": None, "score_value": 0.4},
        {"span_id": chat_span, "run_id": trace_id, "score_value": 0.8},
    ]


def post(receiver: Any, body: Any, token: str = INGEST, raw: bytes | None = None) -> requests.Response:
    return requests.post(
        receiver.http_address + "/v1/span_annotations",
        data=raw if raw is not None else json.dumps(body),
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
        timeout=30,
    )


def test_hostile_or_unauthorised_annotations_store_nothing(receiver: Any) -> None:
    good = {"span_id": "00f067aa0ba902b7", "name": "x", "result": {"score": 1}}
    refused = {
        "not json": post(receiver, None, raw=b"{nope"),
        "no data": post(receiver, {"data": []}),
        "bad span id": post(receiver, {"data": [good, {**good, "span_id": "'; DROP TABLE logs; --"}]}),
        "no result": post(receiver, {"data": [{"span_id": good["span_id"], "name": "x", "result": {}}]}),
        "score not a number": post(receiver, {"data": [{**good, "result": {"score": "NaN"}}]}),
        "too many": post(receiver, {"data": [good] * 1001}),
        "query role": post(receiver, {"data": [good]}, token=READER),
        "no token": post(receiver, {"data": [good]}, token="wrong"),
    }
    assert {k: r.status_code for k, r in refused.items()} == {
        "not json": 400, "no data": 400, "bad span id": 400, "no result": 400, "score not a number": 400,
        "too many": 400, "query role": 403, "no token": 401,
    }  # fmt: skip
    assert "span annotation 1: span_id must be 16 hex digits" in refused["bad span id"].text
    assert dict_rows(receiver, "SELECT count(*) AS n FROM logs") == [{"n": 0}]
    # a long text is cut, not refused
    long = {**good, "result": {"explanation": "x" * 100_000}}
    assert post(receiver, {"data": [long]}).status_code == 200
    [row] = dict_rows(receiver, "SELECT length(explanation) AS n FROM evaluations")
    assert row["n"] == 8192
