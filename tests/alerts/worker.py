"""A handoff worker for tests/alerts, a separate OS process (``python -m tests.alerts.worker``).

On stdin one JSON job: ``{"carrier": {...}, "endpoint": "127.0.0.1:PORT", "expected_artifact": "...",
"mode": "hang" | "complete", "run_id": "..." (optional: the work inside a flow run of that id)}``. It accepts the
handoff with its own TracerProvider (service ``alerts-test-worker``) exporting OTLP/gRPC to the receiver, flushes,
says ``{"event": "accepted"}`` on stdout, then either hangs (the test SIGKILLs it: its work span never ends) or
records the completion and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

WORKER_SERVICE = "alerts-test-worker"


def main() -> None:
    import otel_agent.instrument as oi
    from otel_agent.demo.telemetry import make_provider, otlp_exporter

    job = json.loads(sys.stdin.readline())
    provider = make_provider(WORKER_SERVICE, otlp_exporter(job["endpoint"]))
    run = oi.flow_run("alerts_worker", run_id=job["run_id"]) if job.get("run_id") else contextlib.nullcontext()
    with oi.use_tracer_provider(provider), run:
        with oi.accept(job["carrier"], expected_artifact=job["expected_artifact"]) as work:
            assert oi.flush()
            print(json.dumps({"event": "accepted", "pid": os.getpid(), "handoff_id": work.handoff_id}), flush=True)
            if job["mode"] == "hang":
                while True:  # until SIGKILL: nothing after this line ever runs
                    time.sleep(3600)
            work.completed(artifact_ref=job.get("artifact_ref", "artv_done"))
        assert oi.flush()
    provider.shutdown()
    print(json.dumps({"event": "completed"}), flush=True)


if __name__ == "__main__":
    main()
