"""gen_ai.client.operation.exception (GenAI event, an OTLP log record) read onto the call it belongs to: real OTel
SDK spans and log records exported over OTLP/HTTP to a real receiver on loopback.

The event's definition (semantic-conventions-genai model/gen-ai/events.yaml): exception.type and
exception.message (one of them required), exception.stacktrace, severity WARN; it may carry the span's own
attributes (so gen_ai.response.id)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from otel_agent.server.receiver import Receiver
from tests.conftest import rows, start_receiver

EVENT = "gen_ai.client.operation.exception"


def _chat(tracer: Any, model: str, **attributes: Any) -> Any:
    return tracer.start_as_current_span(
        f"chat {model}",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            **attributes,
        },
    )


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Receiver, OTLPLogExporter, list[Any]]]:
    """One receiver holding three runs; the log records are kept to be delivered a second time."""
    receiver = start_receiver(tmp_path_factory.mktemp("exc") / "exc.duckdb")
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    log_exporter = OTLPLogExporter(endpoint=receiver.http_address + "/v1/logs")
    kept = InMemoryLogRecordExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logs.add_log_record_processor(SimpleLogRecordProcessor(kept))
    tracer, logger = spans.get_tracer("exc-test"), logs.get_logger("exc-test")

    def exception_event(attributes: dict[str, Any], ctx: Any = None) -> None:
        logger.emit(
            LogRecord(
                event_name=EVENT,
                severity_number=SeverityNumber.WARN,
                severity_text="WARN",
                attributes=attributes,
                context=ctx,
            )
        )

    # run 1: the call fails with ERROR status only; the type and message are in the log record parented to it;
    # the failure propagates to the agent span
    with tracer.start_as_current_span(
        "invoke_agent rate_limited", attributes={"gen_ai.operation.name": "invoke_agent"}
    ) as agent:
        with _chat(tracer, "gpt-4o") as call:
            exception_event({"exception.type": "openai.RateLimitError", "exception.message": "Rate limit reached"})
            call.set_status(Status(StatusCode.ERROR))
        agent.set_status(Status(StatusCode.ERROR))
    # run 2: the span's status was left unset; the record names the call by gen_ai.response.id, outside any span
    with (
        tracer.start_as_current_span("invoke_agent by_response", attributes={"gen_ai.operation.name": "invoke_agent"}),
        _chat(tracer, "gpt-4o-mini", **{"gen_ai.response.id": "chatcmpl-exc-2"}),
    ):
        pass
    exception_event(
        {
            "exception.type": "openai.APITimeoutError",
            "exception.message": "Request timed out.",
            "gen_ai.response.id": "chatcmpl-exc-2",
        },
        ctx=otel_context.Context(),
    )
    # run 3: what the span says wins: error.type on one call, an exception span event on the other
    with tracer.start_as_current_span("invoke_agent span_wins", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with _chat(tracer, "gpt-4o", **{"error.type": "timeout"}) as call:
            exception_event({"exception.type": "LogSaysOtherwise"})
            call.set_status(Status(StatusCode.ERROR, "deadline exceeded"))
        with _chat(tracer, "gpt-4o") as call:
            call.record_exception(ValueError("bad request"))
            exception_event({"exception.type": "LogSaysOtherwise", "exception.message": "from the log"})
            call.set_status(Status(StatusCode.ERROR))
    spans.shutdown()
    logs.shutdown()
    yield receiver, OTLPLogExporter(endpoint=receiver.http_address + "/v1/logs"), list(kept.get_finished_logs())
    receiver.stop()


CALLS = (
    "SELECT r.agent_name, c.request_model, c.is_error, c.error_type, c.error_message "
    "FROM provider_calls c JOIN runs r USING (run_id) ORDER BY r.agent_name, c.start_time"
)
RUNS = "SELECT agent_name, status, errors, spans_in_error FROM runs ORDER BY agent_name"


def test_exception_record_gives_the_call_its_error(live: tuple[Receiver, Any, list[Any]]) -> None:
    receiver, _, _ = live
    assert rows(receiver, CALLS) == [
        ("by_response", "gpt-4o-mini", True, "openai.APITimeoutError", "Request timed out."),
        ("rate_limited", "gpt-4o", True, "openai.RateLimitError", "Rate limit reached"),
        ("span_wins", "gpt-4o", True, "timeout", "deadline exceeded"),
        ("span_wins", "gpt-4o", True, "ValueError", "bad request"),
    ]


def test_exception_record_counts_once_at_the_origin(live: tuple[Receiver, Any, list[Any]]) -> None:
    """One failure is one error: the call (its record names it) is the origin, the agent span above it is not;
    a call failed only by its record is an error of its run (the run-level span itself is fine)."""
    receiver, _, _ = live
    assert rows(receiver, RUNS) == [
        ("by_response", "ok", 1, 1),
        ("rate_limited", "error", 1, 2),
        ("span_wins", "ok", 2, 2),
    ]


def test_redelivered_exception_records_change_nothing(live: tuple[Receiver, Any, list[Any]]) -> None:
    receiver, exporter, records = live
    before = rows(receiver, CALLS), rows(receiver, RUNS)
    assert len(records) == 4
    assert exporter.export(records) == LogRecordExportResult.SUCCESS
    # the second copy was acknowledged (the store keeps one row per (time, content_hash))
    assert rows(receiver, "SELECT count(DISTINCT (time, content_hash)) FROM logs WHERE event_name = ?", [EVENT]) == [
        (4,)
    ]
    assert (rows(receiver, CALLS), rows(receiver, RUNS)) == before


def test_unmatched_exception_record_is_no_error(make_receiver: Callable[..., Receiver]) -> None:
    """A record naming no stored span and no known response id belongs to no call: no run gains an error."""
    receiver = make_receiver()
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    logs = LoggerProvider()
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=receiver.http_address + "/v1/logs"))
    )
    tracer = spans.get_tracer("exc-test")
    with (
        tracer.start_as_current_span("invoke_agent fine", attributes={"gen_ai.operation.name": "invoke_agent"}),
        _chat(tracer, "gpt-4o", **{"gen_ai.response.id": "chatcmpl-ok"}),
    ):
        pass
    logs.get_logger("exc-test").emit(
        LogRecord(event_name=EVENT, attributes={"exception.type": "Boom", "gen_ai.response.id": "chatcmpl-other"},
                  context=otel_context.Context())
    )  # fmt: skip
    spans.shutdown()
    logs.shutdown()
    assert rows(receiver, "SELECT count(*) FROM logs WHERE event_name = ?", [EVENT]) == [(1,)]
    assert rows(receiver, "SELECT status, errors, spans_in_error FROM runs") == [("ok", 0, 0)]
    assert rows(receiver, "SELECT is_error, error_type FROM provider_calls") == [(False, None)]
