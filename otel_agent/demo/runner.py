"""One whole demo run: prepare the store, start the receiver (or the embedded exporter), run the agent and its
worker, then shut down in the order that commits everything: worker exits (its spans exported), agent's
provider shuts down (the rest exported), receiver stops (committed, checkpointed, file released)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otel_agent.errors import OtelAgentError

Echo = Callable[[str], None]


class DemoError(OtelAgentError):
    """The demo cannot run (the store is in use or already exists) or its worker failed."""


@dataclass
class DemoResult:
    db: str
    mode: str  # "otlp" (through an in-process receiver) or "embedded" (DuckDBSpanExporter)
    endpoint: str | None  # the receiver's gRPC address in otlp mode
    run_id: str
    worker_pid: int
    report_versions: tuple[str, ...]
    fact_check_handoff_id: str
    translate_handoff_id: str


def prepare_store(db: str, *, replace: bool) -> None:
    """Refuse a store another receiver holds; refuse an existing file unless ``replace`` (then delete it)."""
    from otel_agent.query.client import live_receiver

    if live_receiver(db):
        raise DemoError(f"a receiver is running on {db}; stop it or choose another --db")
    path = Path(db)
    if path.exists():
        if not replace:
            raise DemoError(f"{db} already exists; pass --replace to overwrite it, or choose another --db")
        path.unlink()
    Path(f"{db}.wal").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)


def worker_job(carrier: dict[str, str], subject: str, expected_artifact: str, export: dict[str, str]) -> dict[str, Any]:
    return {"carrier": carrier, "subject": subject, "expected_artifact": expected_artifact, "export": export}


def run_demo(
    db: str,
    *,
    embedded: bool = False,
    replace: bool = False,
    echo: Echo = lambda _: None,
    worker_timeout_s: float = 60.0,
) -> DemoResult:
    """Run the demo into ``db``; returns what it recorded (read the rest from the file)."""
    prepare_store(db, replace=replace)
    if embedded:
        return _run_embedded(db, echo, worker_timeout_s)
    return _run_otlp(db, echo, worker_timeout_s)


def _run_otlp(db: str, echo: Echo, worker_timeout_s: float) -> DemoResult:
    from otel_agent.config import ReceiverConfig
    from otel_agent.demo import content as C
    from otel_agent.demo.channel import WorkerProcess
    from otel_agent.demo.research import run_research
    from otel_agent.demo.telemetry import make_provider, otlp_exporter
    from otel_agent.server.receiver import Receiver

    # Built directly, not resolve()d: OTEL_AGENT_* variables (a tokens file, other ports) are for `serve`.
    config = ReceiverConfig(
        db=db, grpc_endpoint="127.0.0.1:0", http_endpoint="127.0.0.1:0", decode_workers=0, log_level="warning"
    )
    config.validate()
    receiver = Receiver(config).start()
    try:
        endpoint = receiver.grpc_address
        echo(f"receiver on grpc://{endpoint} (in-process) -> {db}; the agent and its worker send OTLP/gRPC")
        export = {"mode": "otlp", "endpoint": endpoint}
        provider = make_provider(C.AGENT_SERVICE, otlp_exporter(endpoint))
        try:
            research = run_research(
                provider,
                lambda carrier, subject, expected: WorkerProcess(
                    worker_job(carrier, subject, expected, export), timeout_s=worker_timeout_s
                ),
                echo,
            )
        finally:
            provider.shutdown()
        human_verdict(db, receiver.http_address, echo)  # through the receiver's ReviewService, as the CLI would
    finally:
        receiver.stop()
    return _result(db, "otlp", endpoint, research)


def _run_embedded(db: str, echo: Echo, worker_timeout_s: float) -> DemoResult:
    from otel_agent import DuckDBSpanExporter
    from otel_agent.demo import content as C
    from otel_agent.demo.channel import WorkerProcess
    from otel_agent.demo.research import run_research
    from otel_agent.demo.telemetry import make_provider

    exporter = DuckDBSpanExporter(db)
    echo(f"embedded DuckDBSpanExporter -> {db}; the worker's spans come back over its stdout as OTLP frames")
    provider = make_provider(C.AGENT_SERVICE, exporter)
    try:
        research = run_research(
            provider,
            lambda carrier, subject, expected: WorkerProcess(
                worker_job(carrier, subject, expected, {"mode": "pipe"}), relay_to=exporter, timeout_s=worker_timeout_s
            ),
            echo,
        )
    finally:
        provider.shutdown()  # also shuts the exporter down: committed, file closed
    human_verdict(db, None, echo)  # straight into the closed file, as `otel-agent review` does
    return _result(db, "embedded", None, research)


def human_verdict(db: str, receiver_url: str | None, echo: Echo) -> None:
    """An editor answers the human_review decision on report v2 (seed 001: the run's final decision is a
    human's), through the same path as ``otel-agent review approve decision``."""
    from otel_agent.demo import content as C
    from otel_agent.read.reviews import review_where
    from otel_agent.read.stores import Where

    review_where(Where((db,), receiver_url), "decision", C.PUBLISH_V2_DECISION_ID, "approve", C.EDITOR,
                 "the hedged range reads right")  # fmt: skip
    echo(f"  review      {C.EDITOR} approved {C.PUBLISH_V2_DECISION_ID} (human_review): the run's final decision")


def _result(db: str, mode: str, endpoint: str | None, research: Any) -> DemoResult:
    return DemoResult(
        db=db,
        mode=mode,
        endpoint=endpoint,
        run_id=research.run_id,
        worker_pid=research.worker_pid,
        report_versions=research.report_versions,
        fact_check_handoff_id=research.fact_check_handoff_id,
        translate_handoff_id=research.translate_handoff_id,
    )
