"""The delegator's side of the worker process: start it, hand it the job, read its events, relay its spans.

The worker is ``python -m otel_agent.demo.worker`` (see its docstring for the JSON-lines protocol). A reader
thread consumes the worker's stdout: span frames (``--embedded`` mode) go straight to the delegator's exporter,
in order, so by the time an event that follows them is read, those spans are written; events go to a queue
that ``expect`` waits on.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_agent.demo.relay import frame_payload, spans_from_otlp
from otel_agent.errors import OtelAgentError

Message = dict[str, Any]
_EOF: Message = {"event": "eof"}


def _worker_env() -> dict[str, str]:
    """The delegator's environment; from a source tree that is not installed, with that tree importable."""
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[2]
    if root.name not in ("site-packages", "dist-packages"):  # never put site-packages ahead of the stdlib
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    return env


class WorkerError(OtelAgentError):
    """The worker process failed, went away or did not answer in time."""


class WorkerProcess:
    """A running fact-check worker. ``relay_to`` receives the worker's spans in pipe mode."""

    def __init__(self, job: Message, *, relay_to: SpanExporter | None = None, timeout_s: float = 60.0) -> None:
        if job["export"]["mode"] == "pipe" and relay_to is None:
            raise ValueError("pipe mode needs an exporter to relay the worker's spans to")
        self.timeout_s = timeout_s
        self._relay_to = relay_to
        self._events: queue.Queue[Message] = queue.Queue()
        self._relay_error: BaseException | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "otel_agent.demo.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=_worker_env(),
        )
        self._reader = threading.Thread(target=self._read, name="otel-agent-demo-worker-reader", daemon=True)
        self._reader.start()
        try:
            self.send(job)
        except BaseException:
            self.kill()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, message: Message) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":"), sort_keys=True) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerError(f"worker {self.pid} is gone: {exc}") from exc

    def expect(self, event: str) -> Message:
        """Wait for the worker's next event; it must be ``event``."""
        try:
            message = self._events.get(timeout=self.timeout_s)
        except queue.Empty:
            raise WorkerError(f"worker {self.pid} sent no {event!r} within {self.timeout_s:.0f} s") from None
        if message.get("event") != event:
            if self._relay_error is not None:
                raise WorkerError(f"relaying the worker's spans failed: {self._relay_error!r}")
            raise WorkerError(f"worker {self.pid} sent {message!r} instead of {event!r} (exit code {self.proc.poll()})")
        return message

    def finish(self) -> int:
        """Close the channel and wait for the worker to exit (its last spans relayed); returns the exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise WorkerError(f"worker {self.pid} did not exit within {self.timeout_s:.0f} s") from None
        self._reader.join(self.timeout_s)
        if self._relay_error is not None:
            raise WorkerError(f"relaying the worker's spans failed: {self._relay_error!r}")
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(self.timeout_s)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    message = {"event": "unreadable", "line": line[:200]}
                payload = frame_payload(message)
                if payload is None:
                    self._events.put(message)
                elif self._relay_error is None:
                    try:
                        result = self._relay_to.export(spans_from_otlp(payload))  # type: ignore[union-attr]
                        if result is not SpanExportResult.SUCCESS:
                            raise WorkerError(f"the exporter refused the worker's spans: {result}")
                    except Exception as exc:  # keep draining the pipe so the worker never blocks on it
                        self._relay_error = exc
        finally:
            self._events.put(_EOF)
