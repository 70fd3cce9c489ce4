"""gen_ai.guardrail.result (semantic-conventions-genai, Development) read onto the guard span it belongs to: real
OTel SDK spans, span events and log records exported over OTLP/HTTP to a real receiver on loopback.

The event carries the guardrail's gen_ai.guardrail.* attributes (component.name, verdict.type, verdict.reason,
target.type, target.id, action.type); it is recorded on, or parented to, the apply_guardrail span. The views take
what the span's own attributes lack from it (span attributes, then the span event, then the log record) and
never infer a verdict that neither gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agent.server.receiver import Receiver
from tests.conftest import rows, start_receiver

EVENT = "gen_ai.guardrail.result"


def _guard(tracer: Any, name: str, operation: str = "apply_guardrail", **attributes: Any) -> Any:
    """A guard span with no verdict of its own (its kind does not matter to the views)."""
    return tracer.start_as_current_span(
        f"{operation} {name}", attributes={"gen_ai.operation.name": operation, **attributes}
    )


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    """One receiver holding four runs, each an agent span above one or two guard spans."""
    receiver = start_receiver(tmp_path_factory.mktemp("guard") / "guard.duckdb")
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.http_address + "/v1/traces")))
    logs = LoggerProvider()
    logs_endpoint = receiver.http_address + "/v1/logs"
    logs.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=logs_endpoint)))
    tracer, logger = spans.get_tracer("guard-test"), logs.get_logger("guard-test")

    def result_record(attributes: dict[str, Any]) -> None:
        logger.emit(LogRecord(event_name=EVENT, severity_number=SeverityNumber.INFO, attributes=attributes))

    def agent(name: str) -> Any:
        attributes = {"gen_ai.operation.name": "invoke_agent"}
        return tracer.start_as_current_span(f"invoke_agent {name}", attributes=attributes)

    # run 1: the verdict is only in a span event on the guard span
    with agent("by_span_event"), _guard(tracer, "pii") as span:
        span.add_event(
            EVENT,
            {
                "gen_ai.guardrail.component.name": "pii_filter",
                "gen_ai.guardrail.verdict.type": "deny",
                "gen_ai.guardrail.verdict.reason": "email address in prompt",
                "gen_ai.guardrail.target.type": "input",
                "gen_ai.guardrail.action.type": "block",
            },
        )
    # run 2: one guard with its verdict only in a log record parented to it (the SDK's logs API, current span),
    # and one that passes
    with agent("by_log_record"):
        with _guard(tracer, "jailbreak"):
            result_record(
                {
                    "gen_ai.guardrail.component.name": "jailbreak_filter",
                    "gen_ai.guardrail.verdict.type": "deny",
                    "gen_ai.guardrail.verdict.reason": "jailbreak pattern",
                    "gen_ai.guardrail.target.type": "input",
                    "gen_ai.guardrail.target.id": "msg-1",
                }
            )
        # run_guardrail: the operation name of the drafts (opentelemetry-util-genai)
        with _guard(tracer, "toxicity", operation="run_guardrail"):
            result_record({"gen_ai.guardrail.component.name": "toxicity", "gen_ai.guardrail.verdict.type": "allow"})
    # run 3: the span's own attributes win over both events
    with (
        agent("span_wins"),
        _guard(
            tracer,
            "moderation",
            **{"gen_ai.guardrail.verdict.type": "allow", "gen_ai.guardrail.verdict.reason": "clean"},
        ) as span,
    ):
        span.add_event(EVENT, {"gen_ai.guardrail.verdict.type": "deny", "gen_ai.guardrail.verdict.reason": "ev"})
        result_record({"gen_ai.guardrail.verdict.type": "deny", "gen_ai.guardrail.verdict.reason": "log"})
    # run 4: the event on a span that is no guard, and a guard with no verdict anywhere: nothing is inferred
    with agent("not_a_guard") as span:
        span.add_event(EVENT, {"gen_ai.guardrail.verdict.type": "deny"})
        result_record({"gen_ai.guardrail.verdict.type": "deny"})
        with _guard(tracer, "silent"):
            pass
    spans.shutdown()
    logs.shutdown()
    yield receiver
    receiver.stop()


GUARDS = (
    "SELECT r.agent_name, g.span_name, g.guard_name, g.outcome, g.reason, g.stage, g.target_id, g.action "
    "FROM guard_results g JOIN runs r USING (run_id) ORDER BY r.agent_name, g.time"
)


def test_guard_facts_come_from_the_result_event(receiver: Receiver) -> None:
    assert rows(receiver, GUARDS) == [
        ("by_log_record", "apply_guardrail jailbreak", "jailbreak_filter", "blocked", "jailbreak pattern", "input",
         "msg-1", None),
        ("by_log_record", "run_guardrail toxicity", "toxicity", "passed", None, None, None, None),
        ("by_span_event", "apply_guardrail pii", "pii_filter", "blocked", "email address in prompt", "input", None,
         "block"),
        ("not_a_guard", "apply_guardrail silent", "apply_guardrail silent", None, None, None, None, None),
        ("span_wins", "apply_guardrail moderation", "apply_guardrail moderation", "passed", "clean", None, None, None),
    ]  # fmt: skip


def test_guard_blocks_count_the_event_verdicts(receiver: Receiver) -> None:
    """The runs count what the events say; a result event on a span that is no guard counts nothing, and a guard
    result record is no failure (the runs are ok, with no errors)."""
    assert rows(
        receiver, "SELECT agent_name, status, errors, guard_checks, guard_blocks FROM runs ORDER BY agent_name"
    ) == [
        ("by_log_record", "ok", 0, 2, 1),
        ("by_span_event", "ok", 0, 1, 1),
        ("not_a_guard", "ok", 0, 1, 0),
        ("span_wins", "ok", 0, 1, 0),
    ]
    assert rows(
        receiver,
        "SELECT span_name, guard_outcome FROM classified_spans WHERE guard_outcome IS NOT NULL ORDER BY span_name",
    ) == [
        ("apply_guardrail jailbreak", "blocked"),
        ("apply_guardrail moderation", "passed"),
        ("apply_guardrail pii", "blocked"),
        ("run_guardrail toxicity", "passed"),
    ]
