"""What the alert tests share: a webhook receiver on loopback that records every POST (and can answer slowly or
with an error), a rules file writer, and the worker process of tests/alerts/worker.py."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import otel_agent.instrument as oi
from otel_agent.demo.telemetry import make_provider, otlp_exporter
from otel_agent.query.client import run_sql
from otel_agent.server.receiver import Receiver
from tests.conftest import wait_until
from tests.loopback_http import LoopbackServer, reply

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cret-for-tests"
SECRET_ENV = "OTEL_AGENT_TEST_WEBHOOK_SECRET"


@dataclass
class Delivery:
    """One POST the sink received."""

    headers: dict[str, str]
    body: bytes
    received_at: float

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.body)


class WebhookSink(LoopbackServer):
    """A webhook receiver: records each POST; answers ``status`` after ``delay_s`` (a test changes both)."""

    def __init__(self, status: int = 200, delay_s: float = 0.0) -> None:
        sink = self
        self.deliveries: list[Delivery] = []
        self.status = status
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.answering = threading.Event()  # set while a request is being answered (held up by delay_s)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with sink.lock:
                    sink.deliveries.append(Delivery(dict(self.headers), body, time.time()))
                    status, delay = sink.status, sink.delay_s
                sink.answering.set()
                if delay:
                    time.sleep(delay)
                sink.answering.clear()
                with contextlib.suppress(OSError):  # the sender gave up waiting (a slow answer past its timeout)
                    reply(self, status, "text/plain", b"ok" if status < 300 else b"no")

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(Handler)

    @property
    def url(self) -> str:
        return self.origin + "/hook"

    def docs(self) -> list[dict[str, Any]]:
        with self.lock:
            return [d.doc for d in self.deliveries]


def webhook_section(url: str, **extra: Any) -> str:
    lines = ["[webhook]", f'url = "{url}"', f'secret_env = "{SECRET_ENV}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def write_rules(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


class Worker:
    """``python -m tests.alerts.worker`` with a job on stdin; its stdout events read one line at a time."""

    def __init__(self, job: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.alerts.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def expect(self, event: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"worker {self.proc.pid} ended (exit {self.proc.wait()}) before saying {event!r}"
        doc = json.loads(line)
        assert doc["event"] == event, doc
        return doc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL
        self.proc.wait(timeout=30)


RULES = """
[[rule]]
name = "runs_seen"
kind = "sql"
severity = "critical"
query = "SELECT run_id AS key, 'run ' || run_id || ' is here' AS summary, status FROM runs"
"""


def send_run(receiver: Receiver, run_id: str) -> None:
    provider = make_provider("alerts-cli", otlp_exporter(receiver.grpc_address))
    with oi.use_tracer_provider(provider), oi.flow_run("w", run_id=run_id):
        pass
    provider.shutdown()
    db = receiver.config.db
    wait_until(lambda: run_sql("SELECT count(*) FROM runs WHERE run_id = ?", [db], params=[run_id]).rows == [(1,)],
               f"run {run_id}")  # fmt: skip
