"""OTLP over HTTP (protobuf and JSON, gzip), span annotations as Phoenix sends them (POST /v1/span_annotations,
``server.annotations``), the QueryService at POST /v1/query, the ReviewService at POST /v1/review and
/v1/writer_trust, and GET /healthz.

Status codes follow the one table in ``otel_agent.errors``; error bodies are ``google.rpc.Status`` in the
request's encoding; 429/503 carry ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import uvicorn
from google.protobuf.message import Message
from google.rpc import status_pb2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from otel_agent.errors import OtelAgentError, UnsupportedMediaTypeError, log_error_reply, status_for
from otel_agent.fold.decode import JSON, PROTOBUF
from otel_agent.fold.otlp_json import response_json
from otel_agent.server import annotations, wrong_protocol
from otel_agent.server.api import ApiMethod, api_methods, parse_request
from otel_agent.server.http_body import MEDIA_TYPE, body_format, declared_length, read_body
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.replies import export_response, retry_delay_s
from otel_agent.server.review_service import ReviewService
from otel_agent.signals import SIGNALS
from otel_agent.store.maintained import DerivedState

log = logging.getLogger(__name__)


def _encode(message: Message, fmt: str, request: Request, status: int = 200) -> Response:
    return _reply(_serialize(message, fmt), fmt, request, status)


def _serialize(message: Message, fmt: str) -> bytes:
    return response_json(message) if fmt == JSON else message.SerializeToString()


def _reply(body: bytes, fmt: str, request: Request, status: int = 200) -> Response:
    headers: dict[str, str] = {}
    if request.headers.get("content-encoding", "").lower() == "gzip" and "gzip" in request.headers.get(
        "accept-encoding", ""
    ):
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    return Response(body, status_code=status, media_type=MEDIA_TYPE[fmt], headers=headers)


def error_response(exc: BaseException, fmt: str, request: Request) -> Response:
    """The OTLP error reply (a ``google.rpc.Status``) for ``exc``, with ``Retry-After`` when it is retryable."""
    mapping = status_for(exc)
    message = str(exc) if isinstance(exc, OtelAgentError) else "internal error"
    log_error_reply(log, exc, f"{request.method} {request.url.path}")
    status = status_pb2.Status(code=mapping.code, message=message)
    response = _encode(status, fmt, request, mapping.http_status)
    if mapping.retryable:
        response.headers["Retry-After"] = str(max(1, math.ceil(retry_delay_s(exc))))
    return response


def _reply_format(request: Request) -> str:
    """The encoding for an error reply: the request's, or protobuf when it cannot be told."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return JSON if content_type == "application/json" else PROTOBUF


def build_app(
    pipeline: IngestPipeline,
    query: QueryService,
    max_body_bytes: int,
    review: ReviewService | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    derived: DerivedState | None = None,
) -> Starlette:
    """The HTTP app: OTLP per signal, the query and review APIs, ``/healthz``, then ``extra_routes`` (the web
    console; after the API routes, so a route mounted at ``/`` cannot shadow them)."""
    auth = pipeline.auth

    def otlp_endpoint(signal: str) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            fmt = _reply_format(request)
            try:
                fmt = body_format(request)
                # Headers first: who is asking and whether there is room, before a byte of the body is read.
                principal = pipeline.gate(request.headers.get("authorization"))
                admission = pipeline.admit(declared_length(request, max_body_bytes))
                try:
                    payload = await read_body(request, max_body_bytes, reserve=lambda n: pipeline.reserve(admission, n))
                except BaseException:
                    pipeline.writer.release(admission)
                    raise
                batch = await run_in_threadpool(pipeline.export, signal, fmt, payload, principal, admission)
            except Exception as exc:
                return error_response(exc, fmt, request)
            return _encode(export_response(signal, batch), fmt, request)

        return endpoint

    async def span_annotations(request: Request) -> Response:
        """Phoenix's span annotations, stored as gen_ai.evaluation.result log records (``server.annotations``)
        through the logs path: the ``ingest`` role, the in-flight bound, acknowledged after COMMIT."""
        fmt = JSON
        try:
            if body_format(request) != JSON:
                raise UnsupportedMediaTypeError("span annotations are JSON (Content-Type: application/json)")
            principal = pipeline.gate(request.headers.get("authorization"))
            admission = pipeline.admit(declared_length(request, max_body_bytes))
            try:
                body = await read_body(request, max_body_bytes, reserve=lambda n: pipeline.reserve(admission, n))
                payload, ids = annotations.to_otlp_logs(body, time.time_ns())
            except BaseException:
                pipeline.writer.release(admission)
                raise
            await run_in_threadpool(pipeline.export, "logs", JSON, payload, principal, admission)
        except Exception as exc:
            return error_response(exc, fmt, request)
        return JSONResponse({"data": [{"id": rid} for rid in ids]})

    def api_endpoint(method: ApiMethod) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            fmt = _reply_format(request)
            try:
                fmt = body_format(request)
                auth.authenticate(request.headers.get("authorization"), method.role)  # before reading the body
                payload = await read_body(request, max_body_bytes)
                message = parse_request(method.request_cls, fmt, payload)
                # Runs (and encodes) on the API's own pool: no thread of the HTTP server is held meanwhile.
                body = await asyncio.wrap_future(
                    method.submit(message, request.headers.get("authorization"), lambda m: _serialize(m, fmt))
                )
            except Exception as exc:
                return error_response(exc, fmt, request)
            return _reply(body, fmt, request)

        return endpoint

    async def healthz(request: Request) -> Response:
        """Readiness for everyone (200 ready / 503 unavailable); with a tokens file, the details (why
        not ready, queue and commit counters) only for a caller with a valid token of any role."""
        reason = pipeline.unavailable()
        status_code = 503 if reason else 200
        body: dict[str, Any] = {"status": "unavailable" if reason else "ready"}
        if auth.enabled:
            try:
                auth.authenticate(request.headers.get("authorization"), None)
            except OtelAgentError:
                return JSONResponse(body, status_code=status_code)
        if reason:
            body["reason"] = reason
        body.update(asdict(pipeline.writer.health()))
        body["decode_worker_restarts"] = pipeline.decoder.restarts
        body["derived"] = derived.report() if derived is not None else None
        return JSONResponse(body, status_code=status_code)

    routes: list[BaseRoute] = [
        Route(spec.http_path, otlp_endpoint(spec.name), methods=["POST"]) for spec in SIGNALS.values()
    ]
    routes += [Route(annotations.PATH, span_annotations, methods=["POST"])]
    routes += [Route(m.http_path, api_endpoint(m), methods=["POST"]) for m in api_methods(query, review)]
    routes += [Route("/healthz", healthz, methods=["GET"])]
    routes += list(extra_routes or ())
    return Starlette(routes=routes)


class HttpServer:
    """uvicorn on a socket bound up front (so a bind failure is known before anything starts)."""

    def __init__(self, app: Starlette, endpoint: str, log_level: str = "warning") -> None:
        host, _, port = endpoint.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, int(port)))
        self.sock.listen(1024)
        self.port: int = self.sock.getsockname()[1]
        # httptools (C) parses requests and uvloop (libuv) runs the loop: both hold the GIL for less time per
        # request than h11 and asyncio's loop, time the writer thread and gRPC's handlers otherwise wait for.
        config = uvicorn.Config(
            app,
            http="httptools",
            loop="uvloop",
            log_level=log_level,
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=5,
            # uvicorn's loggers propagate to the process's logging (one format: the one `serve` sets up)
            log_config=None,
        )
        self.server = uvicorn.Server(config)
        wrong_protocol.install()
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> None:
        """Serve in a background thread."""
        self.thread.start()

    def stop(self) -> None:
        """Stop serving (open requests get up to 5 s) and close the socket."""
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
