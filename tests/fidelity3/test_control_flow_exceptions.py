"""Failure class found with the A2A scenario (tests/fidelity3/test_a2a.py): a control-flow exception is not an
error. Libraries that trace every function record the exceptions Python uses to signal control flow as they pass
— a2a-sdk 0.3 sets its event queue's dequeue span in error with ``QueueEmpty: Queue is closed.`` when a request's
queue closes — and a run then showed one error more than it had. The rule (``oa_control_flow_exception``,
docs/views-runs.md "Errors"): a span in error for the end of an iterator or generator, or an empty or shut-down
queue, is not in error, and such an exception recorded below a span is no failure propagating through it; a real
exception beside it still counts, once, at its origin. The spans are made as a2a-sdk's tracing makes them;
``write_store`` checks the maintained runs against the query-time SQL.
"""

# ruff: noqa: SIM117 — nested `with` blocks draw the span trees

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable
from pathlib import Path

from opentelemetry import context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Tracer

from tests.derived_runs.runs_support import query, write_store
from tests.fidelity3.test_classes import fail, span
from tests.fidelity3.test_classes import traced as traced_here


def traced(body: Callable[[Tracer], None]) -> list[ReadableSpan]:
    """test_classes.traced from an empty context: spans a test before this one left current in this process (an
    instrumentation that did not detach its context) must not become the roots' parent."""
    token = context.attach(context.Context())
    try:
        return traced_here(body)
    finally:
        context.detach(token)


def test_control_flow_exceptions_are_no_errors(tmp_path: Path) -> None:
    def body(t: Tracer) -> None:
        # a run whose function spans end a queue, an iterator and a generator the way a2a-sdk's tracing records them
        with span(t, "invoke_agent planner", **{"gen_ai.operation.name": "invoke_agent"}):
            with span(t, "a2a.server.events.event_consumer.EventConsumer.consume_all"):
                with span(t, "a2a.server.events.event_queue.EventQueue.dequeue_event") as s:
                    fail(s, asyncio.QueueEmpty("Queue is closed."))
            with span(t, "worker.next") as s:
                fail(s, StopAsyncIteration())
            with span(t, "pool.get") as s:
                fail(s, queue.Empty())
        # a run with a real failure under a span that also saw its queue end: one error, at its origin
        with span(t, "invoke_agent booker", **{"gen_ai.operation.name": "invoke_agent"}):
            with span(t, "execute_tool book", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book"}):
                with span(t, "EventQueue.dequeue_event") as s:
                    fail(s, asyncio.QueueEmpty("Queue is closed."))
                with span(t, "hotel.reserve") as s:
                    fail(s, ValueError("no rooms left"))

    path = write_store(tmp_path / "s.duckdb", traced(body))
    runs = query(path, "SELECT agent_name, status, errors, spans_in_error FROM runs ORDER BY start_time")
    assert runs == [
        {"agent_name": "planner", "status": "ok", "errors": 0, "spans_in_error": 0},
        {"agent_name": "booker", "status": "ok", "errors": 1, "spans_in_error": 1},
    ]
    origins = query(path, "SELECT span_name, error_type FROM classified_spans WHERE is_error_origin")
    assert origins == [{"span_name": "hotel.reserve", "error_type": "ValueError"}]
    flagged = query(
        path,
        "SELECT span_name, is_error, error_type FROM classified_spans WHERE span_name LIKE '%dequeue_event' "
        "OR span_name IN ('worker.next', 'pool.get') ORDER BY start_time",
    )
    assert flagged == [{"span_name": f["span_name"], "is_error": False, "error_type": None} for f in flagged]
    assert len(flagged) == 4
