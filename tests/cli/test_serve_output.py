"""What ``otel-agent serve`` prints: one start-up line, every log line in one format (uvicorn's included), and a
hint naming the gRPC port when a gRPC client talks to the HTTP port."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import grpc

from tests.conftest import free_port
from tests.otlp_builders import span_request
from tests.server.test_clean_stop import start_serve

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


def test_one_start_up_line_one_log_format_and_a_hint_for_grpc_on_the_http_port(tmp_path: Path) -> None:
    db, log = str(tmp_path / "s.duckdb"), tmp_path / "serve.log"
    grpc_port, http_port = free_port(), free_port()
    proc = start_serve(db, grpc_port, http_port, log)
    try:
        # a gRPC client (HTTP/2) pointed at the HTTP port
        with grpc.insecure_channel(f"127.0.0.1:{http_port}") as channel:
            call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
            try:
                call(span_request([{"name": "lost"}]).SerializeToString(), timeout=5)
                raise AssertionError("the HTTP port answered a gRPC call")
            except grpc.RpcError:
                pass
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = log.read_text().splitlines()
    starts = [line for line in lines if "receiving OTLP" in line]
    assert len(starts) == 1, lines
    assert f"grpc://127.0.0.1:{grpc_port}" in starts[0]
    assert f"console http://127.0.0.1:{http_port}/" in starts[0]
    own = {"stopping: committing accepted data…"}
    others = [line for line in lines if line not in starts and line not in own and not line.startswith("stopped; ")]
    assert others, lines  # the invalid request was logged
    assert [line for line in others if not LOG_LINE.match(line)] == []
    hints = [line for line in others if "uvicorn.error" in line and "Invalid HTTP request" in line]
    assert hints, others
    assert all(f"gRPC port (127.0.0.1:{grpc_port})" in line for line in hints)
    assert all("http/protobuf" in line for line in hints)
