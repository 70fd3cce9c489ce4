"""The fact-check worker: a separate OS process that accepts the handoff (``python -m otel_agent.demo.worker``).

Protocol (JSON lines). On stdin, first the job::

    {"carrier": {...}, "subject": "<artifact version id>", "expected_artifact": "fact_check_report",
     "export": {"mode": "otlp", "endpoint": "127.0.0.1:4317"} | {"mode": "pipe"}}

then, when the worker says it is waiting, the approval ``{"approval": "granted"}``. On stdout, events
``{"event": "accepted" | "waiting" | "completed", ...}`` — each sent only after the transitions before it were
flushed (so they are in the store when the delegator reads the event) — and, in ``pipe`` mode, the worker's
span batches as OTLP frames (see ``relay``). The carrier holds only trace context and the two opaque receipt
ids; what to check (``subject``) and what to deliver (``expected_artifact``) come from the job description.

The worker has its own TracerProvider (service ``fact-check-worker``, its own pid) and its own flow run. Its
work span and run span stay open while it waits for the approval; the transitions reach the store anyway.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


def fact_check(job: Message, send: Callable[[Message], None], receive: Callable[[], Message]) -> None:
    """Accept the handoff in ``job["carrier"]``, check the sources, wait for approval, deliver, complete."""
    import otel_agent.instrument as oi
    from otel_agent.demo import content as C

    with (
        oi.flow_run(C.WORKER_WORKFLOW, run_id=C.WORKER_RUN_ID, agent_name=C.WORKER_AGENT),
        oi.accept(job["carrier"], expected_artifact=job["expected_artifact"]) as work,
    ):
        oi.flush()
        send({"event": "accepted", "pid": os.getpid(), "handoff_id": work.handoff_id})
        with (
            oi.step("check_sources", step_id=C.WORKER_STEP_CHECK),
            oi.skill(*C.WORKER_SKILL[:2], invocation_id=C.WORKER_SKILL[2]),
        ):
            for src in C.SOURCES:
                with oi.tool_invocation("web_fetch", call_id=C.worker_fetch_call_id(src), provider="web") as fetch:
                    if src.source_id == C.UNREACHABLE_SOURCE:
                        fetch.retry("connection_reset")
                        fetch.fail("source_unreachable", f"{src.url} did not answer twice")
            work.progress("sources_checked")
            work.waiting(C.WAITING_FOR, reason="source_unreachable")
            oi.flush()
            send({"event": "waiting", "waiting_for": C.WAITING_FOR})
            approval = receive()
            if approval.get("approval") != "granted":
                raise PermissionError(f"fallback source not approved: {approval!r}")
            work.progress("approval_granted")
            archived = next(s for s in C.SOURCES if s.source_id == C.UNREACHABLE_SOURCE)
            with oi.tool_invocation(
                "web_fetch", call_id=C.worker_fetch_call_id(archived) + "_archived", provider="web_archive"
            ):
                pass
        with oi.step("write_fact_check", step_id=C.WORKER_STEP_WRITE):
            subject = job["subject"]
            oi.verifier_result(
                "claim_support", passed=True, score=1.0, reason="all_claims_supported", target_id=subject
            )
            report = oi.create_artifact(
                "Fact check of the research report",
                artifact_type="fact_check_report",
                artifact_id=C.FACT_CHECK_ARTIFACT_ID,
            )
            text = C.render_fact_check(subject)
            ref = report.add_version(
                text, evidence_ids=[s.evidence_id for s in C.SOURCES], version_id=C.FACT_CHECK_VERSION_ID
            )
            work.completed(artifact_ref=ref)
            oi.flush()
            send(
                {
                    "event": "completed",
                    "artifact_ref": ref,
                    "content_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                }
            )


def main() -> int:
    from otel_agent.demo import content as C
    from otel_agent.demo.relay import JsonLines, PipeSpanExporter
    from otel_agent.demo.telemetry import make_provider, otlp_exporter
    from otel_agent.instrument import use_tracer_provider

    out = JsonLines(sys.stdout)

    def receive() -> Message:
        line = sys.stdin.readline()
        if not line:
            raise EOFError("the delegator closed the channel")
        return json.loads(line)

    try:
        job = receive()
        export = job["export"]
        exporter = otlp_exporter(export["endpoint"]) if export["mode"] == "otlp" else PipeSpanExporter(out)
    except Exception as exc:  # a bad job: say so on stderr, nothing was recorded
        print(f"otel_agent.demo.worker: bad job: {exc!r}", file=sys.stderr)
        return 2
    provider = make_provider(C.WORKER_SERVICE, exporter)
    status = 0
    try:
        with use_tracer_provider(provider):
            fact_check(job, out.send, receive)
    except Exception:
        traceback.print_exc(file=sys.stderr)
        status = 1
    finally:
        provider.shutdown()  # exports the spans still open until now: the work span, the run
    return status


if __name__ == "__main__":
    sys.exit(main())
