"""Start and stop: both transports or neither; SIGTERM under load commits what was accepted and exits 0;
settings resolve flag > environment > default; the embedded exporter writes what the receiver writes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import duckdb
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

from otel_agent import DuckDBSpanExporter
from otel_agent.config import ReceiverConfig
from otel_agent.server.receiver import Receiver
from tests.conftest import free_port, rows, wait_until
from tests.lifecycle.support import healthz
from tests.otlp_builders import post_traces, span_request
from tests.server.test_crash import receiver_under_load, start_receiver, stored_span_ids


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize(("taken", "other"), [("http", "grpc"), ("grpc", "http")])
def test_both_transports_or_neither(tmp_path, taken, other):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    ports = {taken: blocker.getsockname()[1], other: free_port()}
    config = ReceiverConfig.resolve(
        db=str(tmp_path / "x.duckdb"),
        grpc_endpoint=f"127.0.0.1:{ports['grpc']}",
        http_endpoint=f"127.0.0.1:{ports['http']}",
        decode_workers=0,
    )
    port = ports[taken]
    with pytest.raises(OSError, match=f"--{taken}-endpoint 127.0.0.1:{port}: port {port} is in use"):
        Receiver(config).start()
    blocker.close()
    assert not listening(ports[other]), f"{other} must not serve when {taken} could not start"
    # The file was closed again: a new receiver can open it.
    ok = Receiver(config).start()
    assert listening(ok.grpc_port)
    assert listening(ok.http_port)
    ok.stop()


def test_sigterm_under_load_commits_everything_acknowledged(tmp_path):
    db = str(tmp_path / "term.duckdb")
    proc, load = receiver_under_load(db, clients=3, spans_per_request=20, acked=2_000)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    load.stop()
    assert set(load.acked) <= stored_span_ids(db)
    assert not os.path.exists(db + ".receiver.json")


def test_settings_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("OTEL_AGENT_QUEUE_MAX_BYTES", "12345")
    monkeypatch.setenv("OTEL_AGENT_BATCH_MAX_ITEMS", "77")
    config = ReceiverConfig.resolve(batch_max_items=99)
    assert config.queue_max_bytes == 12345  # env over default
    assert config.batch_max_items == 99  # argument over env
    assert config.db == "./otel_agent.duckdb"  # default
    # The CLI: flag over env over default, through the same table.
    out = subprocess.run(
        [sys.executable, "-m", "otel_agent", "serve", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "OTEL_AGENT_QUEUE_MAX_BYTES" in out
    assert "--queue-max-bytes" in out


def make_spans():
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "embedded-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("emb", "1.0")
    with tracer.start_as_current_span(
        "invoke_workflow w", attributes={"gen_ai.operation.name": "invoke_workflow"}
    ) as root:
        root.add_event("started", {"n": 1})
        with tracer.start_as_current_span(
            "chat m",
            attributes={"gen_ai.usage.input_tokens": 5, "api_key": "drop-me"},
            links=[Link(root.get_span_context())],
        ):
            pass
    return memory.get_finished_spans()


COLUMNS = (
    "trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status_code, attributes, "
    "service_name, resource_attributes, scope_name, scope_version"
)


def test_embedded_exporter_writes_what_the_receiver_writes(make_receiver, tmp_path):
    spans = make_spans()
    receiver = make_receiver()
    OTLPSpanExporter(endpoint=receiver.grpc_address, insecure=True).export(spans)
    via_receiver = rows(receiver, f"SELECT {COLUMNS} FROM spans ORDER BY name")
    events_r = rows(receiver, "SELECT * FROM span_events")
    links_r = rows(receiver, "SELECT * FROM span_links")

    path = tmp_path / "embedded.duckdb"
    exporter = DuckDBSpanExporter(path)
    assert exporter.export(spans).name == "SUCCESS"
    assert exporter.export(spans).name == "SUCCESS"  # re-export: nothing added
    exporter.shutdown()
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute(f"SELECT {COLUMNS} FROM spans ORDER BY name").fetchall() == via_receiver
    assert con.execute("SELECT * FROM span_events").fetchall() == events_r
    assert con.execute("SELECT * FROM span_links").fetchall() == links_r
    con.close()
    assert len(via_receiver) == 2
    assert '"api_key"' not in via_receiver[0][8] + via_receiver[1][8]


def test_a_dead_decode_worker_is_replaced(make_receiver):
    """A killed decode worker costs at most a retryable reply; the SDK exporter's retry then lands."""
    import psutil
    from opentelemetry.sdk.trace.export import SpanExportResult

    receiver = make_receiver(decode_workers=2)
    workers = [psutil.Process(pid) for pid in receiver.decoder.pids]
    assert len(workers) == 2
    assert all("otel_agent.ingest.decode_worker" in " ".join(w.cmdline()) for w in workers)
    assert {w.pid for w in workers} <= {c.pid for c in psutil.Process().children()}
    for w in workers:
        w.kill()
        w.wait(10)
    spans = make_spans()
    exporter = OTLPSpanExporter(endpoint=receiver.grpc_address, insecure=True, timeout=30)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    exporter.shutdown()
    assert rows(receiver, "SELECT count(*) FROM spans") == [(2,)]
    assert receiver.decoder.restarts >= 1


def test_sigterm_stops_a_receiver_whose_decode_worker_hangs(tmp_path):
    """A worker that never answers (SIGSTOP) holds its request only until the decode time limit; SIGTERM
    then stops the receiver, and the stopped worker does not outlive it."""
    import psutil
    import requests

    http_port = free_port()
    proc = start_receiver(
        str(tmp_path / "hung.duckdb"), free_port(), http_port, "--decode-workers", "1", "--decode-timeout-s", "2"
    )
    (worker,) = psutil.Process(proc.pid).children()
    worker.suspend()
    started = time.monotonic()
    resp = post_traces(f"http://127.0.0.1:{http_port}", span_request([{"name": "held"}]), timeout=60)
    assert resp.status_code == 503
    assert time.monotonic() - started < 30  # killed at its 2 s limit, not hung
    deadline = time.monotonic() + 60
    while requests.get(f"http://127.0.0.1:{http_port}/healthz", timeout=10).status_code != 200:
        assert time.monotonic() < deadline, "the hung worker was not replaced"
        time.sleep(0.1)
    (next_one,) = psutil.Process(proc.pid).children()
    assert next_one.pid != worker.pid
    next_one.suspend()  # the replacement hangs too, with a request in it when SIGTERM comes
    holder = threading.Thread(
        target=requests.post,
        args=(f"http://127.0.0.1:{http_port}/v1/traces",),
        kwargs={"data": span_request([{"name": "x"}]).SerializeToString(),
                "headers": {"Content-Type": "application/x-protobuf"}, "timeout": 60},
    )  # fmt: skip
    holder.start()
    wait_until(lambda: healthz(f"http://127.0.0.1:{http_port}")["inflight_bytes"] > 0, "the request to be admitted")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    holder.join(timeout=30)
    assert not holder.is_alive()
    _, alive = psutil.wait_procs([worker, next_one], timeout=5)
    assert not alive
