"""Bodies are not read before the caller is known and there is room for them (issue 11.3).

A real ``otel-agent serve`` subprocess, real sockets: concurrent unauthenticated 15 MB uploads over HTTP and
gRPC are refused without the receiver's memory growing by their size (psutil, the receiver's RSS); with a
valid token, uploads beyond the in-flight bound get 429 / RESOURCE_EXHAUSTED, before their body is read
when the bound is already reached, and while it is read when their bytes push past it.
"""

from __future__ import annotations

import select
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import duckdb
import grpc
import psutil
import pytest
import requests

from tests.conftest import free_port, wait_until, write_tokens_file
from tests.otlp_builders import span_request
from tests.server.test_crash import TRACE_EXPORT, start_receiver

TOKEN = "gate-s3cret"
MiB = 1024 * 1024
BOUND = 8 * MiB
BIG = 15 * MiB
GROWTH_LIMIT = 60 * MiB  # 30 × 15 MB buffered would be 450 MB


class Serve:
    def __init__(self, proc, db: str, grpc_port: int, http_port: int) -> None:
        self.proc, self.db, self.grpc_port, self.http_port = proc, db, grpc_port, http_port
        self.ps = psutil.Process(proc.pid)

    def rss(self) -> int:
        return self.ps.memory_info().rss

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(timeout=60) == 0

    def stored_names(self) -> list[str]:
        self.stop()
        con = duckdb.connect(self.db, read_only=True)
        try:
            return sorted(r[0] for r in con.execute("SELECT name FROM spans").fetchall())
        finally:
            con.close()


@pytest.fixture
def serve(tmp_path) -> Iterator[Serve]:
    tokens = write_tokens_file(tmp_path / "tokens.json", {"token": TOKEN, "principal": "agent", "roles": ["ingest"]})
    grpc_port, http_port, db = free_port(), free_port(), str(tmp_path / "gate.duckdb")
    proc = start_receiver(
        db, grpc_port, http_port,
        "--tokens-file", tokens, "--queue-max-bytes", str(BOUND), "--decode-workers", "1",
    )  # fmt: skip
    serve = Serve(proc, db, grpc_port, http_port)
    yield serve
    serve.stop()


def _health(serve: Serve) -> dict:
    """The receiver's /healthz details (its tokens file asks for a token)."""
    reply = requests.get(
        f"http://127.0.0.1:{serve.http_port}/healthz", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    return reply.json()


class PeakRss:
    """Samples a process's RSS every 10 ms while the block runs."""

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.before = self.peak = serve.rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.serve.rss())
            time.sleep(0.01)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def growth(self) -> int:
        return self.peak - self.before


class RawPost:
    """An HTTP/1.1 POST over a plain socket that keeps sending its body while it watches for the reply, so
    a reply sent before the body was read is seen (a library client would only see the reset)."""

    def __init__(self, port: int, headers: dict[str, str], path: str = "/v1/traces") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.received = b""

    def send(self, data: bytes, chunk: int = 256 * 1024) -> int | None:
        """Send ``data`` (or stop when a reply comes); returns the reply's status if one came."""
        view = memoryview(data)
        while view:
            readable, writable, _ = select.select([self.sock], [self.sock], [], 30)
            if readable:
                return self.status()
            if writable:
                try:
                    sent = self.sock.send(view[:chunk])
                except OSError:
                    return self.status()
                view = view[sent:]
        return None

    def status(self, timeout: float = 30) -> int | None:
        self.sock.settimeout(timeout)
        try:
            while b"\r\n" not in self.received:
                piece = self.sock.recv(65536)
                if not piece:
                    break
                self.received += piece
        except OSError:
            pass
        line = self.received.split(b"\r\n", 1)[0].split()
        return int(line[1]) if len(line) >= 2 else None

    def close(self) -> None:
        self.sock.close()


def post_all(port: int, headers: dict[str, str], body: bytes) -> int | None:
    post = RawPost(port, headers)
    try:
        status = post.send(body)
        return status if status is not None else post.status()
    finally:
        post.close()


def otlp_body(nbytes: int, tag: str) -> bytes:
    per_span = 512 * 1024
    spans = [{"name": f"{tag}-{i}", "attributes": {"blob": "x" * per_span}} for i in range(max(1, nbytes // per_span))]
    return span_request(spans).SerializeToString()


def _headers(length: int | None, token: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/x-protobuf"}
    if length is not None:
        headers["Content-Length"] = str(length)
    else:
        headers["Transfer-Encoding"] = "chunked"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def test_unauthenticated_large_uploads_are_refused_unread(serve):
    garbage = b"\x00" * BIG  # never looked at: refused from the headers
    with PeakRss(serve) as http_rss, ThreadPoolExecutor(30) as pool:
        statuses = list(pool.map(lambda _: post_all(serve.http_port, _headers(BIG, None), garbage), range(30)))
    assert statuses == [401] * 30
    assert http_rss.growth < GROWTH_LIMIT, f"HTTP: +{http_rss.growth / MiB:.0f} MiB"

    with grpc.insecure_channel(
        f"127.0.0.1:{serve.grpc_port}", options=[("grpc.max_send_message_length", 32 * MiB)]
    ) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)

        def one(_: int) -> grpc.StatusCode:
            try:
                call(garbage, timeout=60)
                return grpc.StatusCode.OK
            except grpc.RpcError as exc:
                return exc.code()

        with PeakRss(serve) as grpc_rss, ThreadPoolExecutor(30) as pool:
            codes = list(pool.map(one, range(30)))
    assert codes == [grpc.StatusCode.UNAUTHENTICATED] * 30
    assert grpc_rss.growth < GROWTH_LIMIT, f"gRPC: +{grpc_rss.growth / MiB:.0f} MiB"
    print(f"RSS growth: HTTP +{http_rss.growth / MiB:.1f} MiB, gRPC +{grpc_rss.growth / MiB:.1f} MiB")


def test_authenticated_uploads_beyond_the_bound_get_429(serve):
    # A slow client holds the whole bound: its Content-Length is admitted before its body arrives.
    held = otlp_body(BOUND, "held")
    holder = RawPost(serve.http_port, _headers(len(held), TOKEN))
    assert holder.send(held[: len(held) // 2]) is None
    deadline = time.monotonic() + 10
    while requests.get(f"http://127.0.0.1:{serve.http_port}/healthz", headers={"Authorization": f"Bearer {TOKEN}"},
                       timeout=10).json()["inflight_bytes"] < len(held):  # fmt: skip
        assert time.monotonic() < deadline
        time.sleep(0.05)

    big = otlp_body(BIG, "big")
    with PeakRss(serve) as rss, ThreadPoolExecutor(20) as pool:
        statuses = list(pool.map(lambda _: post_all(serve.http_port, _headers(len(big), TOKEN), big), range(20)))
    assert statuses == [429] * 20
    assert rss.growth < GROWTH_LIMIT, f"+{rss.growth / MiB:.0f} MiB"

    with grpc.insecure_channel(f"127.0.0.1:{serve.grpc_port}") as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as info:
            call(otlp_body(MiB, "g"), metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=30)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    # The holder finishes: stored.
    assert holder.send(held[len(held) // 2 :]) is None
    assert holder.status() == 200
    holder.close()

    # Now a holder of 3/4 of the bound, and a chunked upload (no Content-Length: its size is only known as
    # it is read) that passes the bound while it is read.
    held2 = otlp_body(BOUND * 3 // 4, "held2")
    holder = RawPost(serve.http_port, _headers(len(held2), TOKEN))
    assert holder.send(held2[:1024]) is None
    wait_until(lambda: _health(serve)["inflight_bytes"] >= len(held2), "the holder's Content-Length to be admitted")
    chunked = RawPost(serve.http_port, _headers(None, TOKEN))
    body = otlp_body(BOUND // 2, "chunked")
    framed = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + MiB]), body[i : i + MiB]) for i in range(0, len(body), MiB))
    status = chunked.send(framed + b"0\r\n\r\n")
    assert (status or chunked.status()) == 429
    chunked.close()
    assert holder.send(held2[1024:]) is None
    assert holder.status() == 200
    holder.close()

    health = requests.get(f"http://127.0.0.1:{serve.http_port}/healthz", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=10).json()  # fmt: skip
    assert health["inflight_bytes"] == 0  # every refusal gave its reservation back
    # Only the two holders' spans were stored.
    assert serve.stored_names() == sorted(span_names(held) + span_names(held2))


def span_names(body: bytes) -> list[str]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest.FromString(body)
    return [s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
