"""A full receiver answers retryable statuses, never drops; the SDK exporters' retries then store every
span exactly once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import rows
from tests.otlp_builders import post_traces, span_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def burst(n: int, fn):
    start = threading.Barrier(n)

    def one(i: int):
        start.wait()
        return fn(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_full_queue_gives_retryable_replies_on_both_transports(make_receiver):
    # A 1-byte bound admits one request at a time; the writer lingers 300 ms to hold it in flight.
    receiver = make_receiver(queue_max_bytes=1, batch_timeout_ms=300)
    bodies = [span_request([{"name": f"s{i}"}]).SerializeToString() for i in range(8)]

    def via_http(i: int):
        return post_traces(receiver.http_address, bodies[i], timeout=30)

    replies = burst(8, via_http)
    codes = sorted(r.status_code for r in replies)
    assert 200 in codes, codes
    assert 429 in codes, codes
    refused = [r for r in replies if r.status_code == 429]
    assert all(1 <= int(r.headers["Retry-After"]) <= 2 for r in refused)
    assert all(status_pb2.Status.FromString(r.content).code == 8 for r in refused)  # RESOURCE_EXHAUSTED
    stored_http = rows(receiver, "SELECT count(*) FROM spans")[0][0]
    assert stored_http == codes.count(200)  # every 200 is stored, nothing else

    channel = grpc.insecure_channel(receiver.grpc_address)
    call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
    fresh = [span_request([{"name": f"g{i}"}]).SerializeToString() for i in range(8)]

    def via_grpc(i: int):
        try:
            call(fresh[i], timeout=30)
            return None
        except grpc.RpcError as exc:
            return exc

    outcomes = burst(8, via_grpc)
    errors = [e for e in outcomes if e is not None]
    assert errors
    assert len(errors) < 8
    for err in errors:
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailers = dict(err.trailing_metadata())
        info = error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"])
        assert 0.5 <= info.retry_delay.seconds + info.retry_delay.nanos / 1e9 <= 1.5
    channel.close()
    assert rows(receiver, "SELECT count(*) FROM spans")[0][0] == stored_http + outcomes.count(None)


def test_sdk_exporters_retry_until_everything_is_stored_once(make_receiver):
    # Room for about three of these requests at a time; twelve arrive at once.
    receiver = make_receiver(queue_max_bytes=8_000, batch_timeout_ms=50)
    # Make 12 batches of real SDK spans, 25 each.
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bp")
    for i in range(300):
        with tracer.start_as_current_span(f"span{i}"):
            pass
    spans = memory.get_finished_spans()
    batches = [spans[i : i + 25] for i in range(0, 300, 25)]

    def export(i: int) -> SpanExportResult:
        exporter = (
            GrpcSpanExporter(endpoint=receiver.grpc_address, insecure=True, timeout=60)
            if i % 2 == 0
            else HttpSpanExporter(endpoint=receiver.http_address + "/v1/traces", timeout=60)
        )
        try:
            return exporter.export(batches[i])
        finally:
            exporter.shutdown()

    results = burst(len(batches), export)
    assert results == [SpanExportResult.SUCCESS] * len(batches)
    assert rows(receiver, "SELECT count(*), count(DISTINCT span_id) FROM spans") == [(300, 300)]
    assert receiver.writer.stats.items == 300
    assert receiver.writer.stats.refused > 0  # the burst really was pushed back and retried
