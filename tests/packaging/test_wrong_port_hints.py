"""A client on the wrong port is told so: an OTLP/HTTP exporter (HTTP/1) pointed at ``otel-agent serve``'s gRPC
port gets a ``400`` naming the HTTP port, and the receiver logs one line saying the same; a TLS client is told
the port is plain text; gRPC clients on the same port are served as before (relayed to grpcio), their spans
stored. Over loopback, against the real ``serve`` process."""

from __future__ import annotations

import signal
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import duckdb
import requests

from tests.cli.test_serve_output import LOG_LINE
from tests.conftest import free_port
from tests.server.test_clean_stop import start_serve

SEND = """
import sys
from opentelemetry.exporter.otlp.proto.{proto}.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export import SpanExportResult
exporter = OTLPSpanExporter(endpoint=sys.argv[1], {extra})
provider = TracerProvider()
results = []
class Keep(SimpleSpanProcessor):
    def on_end(self, span):
        results.append(exporter.export([span]))
provider.add_span_processor(Keep(exporter))
with provider.get_tracer("wrong-port").start_as_current_span(sys.argv[2]):
    pass
print(results[0].name)
"""


def export(proto: str, endpoint: str, name: str) -> str:
    """One span exported by the OpenTelemetry SDK's own exporter; its result (SUCCESS / FAILURE)."""
    extra = "insecure=True, timeout=5" if proto == "grpc" else "timeout=5"
    done = subprocess.run(
        [sys.executable, "-c", SEND.format(proto=proto, extra=extra), endpoint, name],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_http1_and_tls_on_the_grpc_port_get_a_hint_and_grpc_still_works(tmp_path: Path) -> None:
    db, log = str(tmp_path / "hint.duckdb"), tmp_path / "serve.log"
    grpc_port, http_port = free_port(), free_port()
    proc = start_serve(db, grpc_port, http_port, log)
    try:
        # the SDK's OTLP/HTTP exporter (HTTP/1.1) pointed at the gRPC port: it fails, and says why
        assert export("http", f"http://127.0.0.1:{grpc_port}/v1/traces", "lost over http1") == "FAILURE"
        # a plain HTTP/1 client sees the hint in the answer's body
        answer = requests.post(
            f"http://127.0.0.1:{grpc_port}/v1/traces", data=b"\x0a\x00", timeout=10,
            headers={"Content-Type": "application/x-protobuf"},
        )  # fmt: skip
        assert answer.status_code == 400
        assert f"HTTP port (http://127.0.0.1:{http_port})" in answer.text
        assert "POST /v1/traces" in answer.text
        # TLS to the plain-text port
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection(("127.0.0.1", grpc_port), timeout=10) as raw:
            try:
                context.wrap_socket(raw, server_hostname="localhost").close()
                raise AssertionError("a TLS handshake succeeded on the plain-text gRPC port")
            except (ssl.SSLError, OSError):
                pass
        # gRPC on the gRPC port and OTLP/HTTP on the HTTP port still land
        assert export("grpc", f"127.0.0.1:{grpc_port}", "over grpc") == "SUCCESS"
        assert export("http", f"http://127.0.0.1:{http_port}/v1/traces", "over http") == "SUCCESS"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            stopped = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert stopped == 0
    lines = log.read_text().splitlines()
    hints = [line for line in lines if "on the OTLP/gRPC port" in line]
    assert [line for line in hints if not LOG_LINE.match(line)] == []
    http1 = [line for line in hints if "HTTP/1 request (POST /v1/traces)" in line]
    # the exporter's request logged it; the second request within 10 s is counted, not logged again
    assert len(http1) == 1, lines
    assert f"the OTLP/gRPC port 127.0.0.1:{grpc_port}" in http1[0]
    assert f"must send to the HTTP port (http://127.0.0.1:{http_port})" in http1[0]
    assert " WARNING otel_agent.server.grpc_front: " in http1[0]
    tls = [line for line in hints if line.split(": ", 1)[-1].startswith("TLS handshake from 127.0.0.1:")]
    assert len(tls) == 1, lines
    assert "speaks plain text" in tls[0]
    assert "Traceback" not in log.read_text()
    with duckdb.connect(db, read_only=True) as con:
        names = sorted(row[0] for row in con.execute("SELECT name FROM spans").fetchall())
    assert names == ["over grpc", "over http"]
