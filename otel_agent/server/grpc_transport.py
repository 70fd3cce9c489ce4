"""OTLP over gRPC: the three Export services plus the project's QueryService and ReviewService, on one server.

The OTLP handlers take the request as raw bytes (identity deserializer) rather than as parsed messages:
the bytes go to a decode worker process, which parses them with the generated OTLP messages, so the
parse happens once and off the gRPC threads. Service names come from the signal registry
(``otel_agent.signals``) and the generated descriptors.

A server interceptor (``_Gate``) authenticates every call from its metadata, and checks the in-flight bound
for OTLP, before grpcio reads the message: grpcio receives a unary request only when the handler runs, and a
refused call is answered by a streaming handler that never asks for the message. A message that is read
arrives whole (grpcio has no partial reads), so it is admitted against the bound once read; at most
``threads`` are read at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from otel_agent.api.v1 import query_pb2, query_pb2_grpc, review_pb2, review_pb2_grpc
from otel_agent.errors import OtelAgentError, log_error_reply, status_for
from otel_agent.fold.decode import PROTOBUF
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.replies import export_response, retry_delay_s
from otel_agent.server.review_service import ReviewService
from otel_agent.signals import SIGNALS

log = logging.getLogger(__name__)


def _method(service: str, name: str) -> str:
    return f"/{service}/{name}"


_QUERY_SERVICE = query_pb2.DESCRIPTOR.services_by_name["QueryService"].full_name
_REVIEW_SERVICE = review_pb2.DESCRIPTOR.services_by_name["ReviewService"].full_name
OTLP_METHODS = {_method(spec.grpc_service, "Export"): spec.name for spec in SIGNALS.values()}
"""gRPC method path → signal name."""
ROLES: dict[str, str] = {
    **dict.fromkeys(OTLP_METHODS, "ingest"),
    _method(_QUERY_SERVICE, "Query"): "query",
    _method(_REVIEW_SERVICE, "Review"): "review",
    _method(_REVIEW_SERVICE, "SetWriterTrust"): "review",
}
"""The role each method needs: checked by ``_Gate`` before the message is read, and by the service again."""


def _abort(context: grpc.ServicerContext, exc: BaseException, where: str = "a gRPC handler") -> None:
    mapping = status_for(exc)
    message = str(exc) if isinstance(exc, OtelAgentError) else "internal error"
    log_error_reply(log, exc, where)
    if mapping.retryable:
        # RetryInfo twice: inside the rich status (what the Collector and Go clients read) and on its own
        # (what the Python SDK exporter reads).
        delay = retry_delay_s(exc)
        retry_info = error_details_pb2.RetryInfo(retry_delay={"seconds": int(delay), "nanos": int((delay % 1) * 1e9)})
        status = status_pb2.Status(code=mapping.code, message=message)
        status.details.add().Pack(retry_info)
        context.set_trailing_metadata(
            (
                ("grpc-status-details-bin", status.SerializeToString()),
                ("google.rpc.retryinfo-bin", retry_info.SerializeToString()),
            )
        )
    context.abort(grpc.StatusCode[mapping.grpc_code], message)


def _authorization_of(metadata: Sequence[tuple[str, Any]] | None) -> str | None:
    for key, value in metadata or ():
        if key == "authorization":
            return value
    return None


def _authorization(context: grpc.ServicerContext) -> str | None:
    return _authorization_of(context.invocation_metadata())


def _refusal(exc: BaseException) -> grpc.RpcMethodHandler:
    """A handler that answers ``exc`` without reading the request: streaming, so grpcio does not receive
    the message before calling it (for unary handlers it does)."""

    def refuse(requests: Any, context: grpc.ServicerContext) -> bytes:
        _abort(context, exc)
        raise exc  # unreachable: abort raises

    return grpc.stream_unary_rpc_method_handler(refuse)


class _Gate(grpc.ServerInterceptor):
    """Authenticate from metadata, and for OTLP check the in-flight bound, before the message is read.

    Runs on grpcio's serving thread, so it does only what is quick: a hash of the token and a look at a
    counter."""

    def __init__(self, pipeline: IngestPipeline) -> None:
        self.pipeline = pipeline

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        role = ROLES.get(method)
        if role is not None:
            authorization = _authorization_of(handler_call_details.invocation_metadata)
            try:
                if method in OTLP_METHODS:
                    self.pipeline.gate(authorization)
                else:
                    self.pipeline.auth.authenticate(authorization, role)
            except OtelAgentError as exc:
                return _refusal(exc)
        return continuation(handler_call_details)


def _otlp_handler(signal: str, pipeline: IngestPipeline) -> grpc.RpcMethodHandler:
    def export(payload: bytes, context: grpc.ServicerContext) -> bytes:
        try:
            principal = pipeline.auth.authenticate(_authorization(context), "ingest")
            batch = pipeline.export(signal, PROTOBUF, payload, principal, pipeline.admit(len(payload)))
        except Exception as exc:
            _abort(context, exc, f"gRPC {SIGNALS[signal].grpc_service}/Export")
            raise  # unreachable: abort raises
        return export_response(signal, batch).SerializeToString()

    return grpc.unary_unary_rpc_method_handler(export, request_deserializer=None, response_serializer=None)


class _QueryServicer(query_pb2_grpc.QueryServiceServicer):
    def __init__(self, service: QueryService) -> None:
        self.service = service

    def Query(self, request: query_pb2.QueryRequest, context: grpc.ServicerContext) -> query_pb2.QueryResponse:  # noqa: N802
        try:
            return self.service.query(request, _authorization(context))
        except Exception as exc:
            _abort(context, exc)
            raise


class _ReviewServicer(review_pb2_grpc.ReviewServiceServicer):
    def __init__(self, service: ReviewService) -> None:
        self.service = service

    def Review(self, request: review_pb2.ReviewRequest, context: grpc.ServicerContext) -> review_pb2.ReviewResponse:  # noqa: N802
        try:
            return self.service.review(request, _authorization(context))
        except Exception as exc:
            _abort(context, exc)
            raise

    def SetWriterTrust(  # noqa: N802
        self, request: review_pb2.WriterTrustRequest, context: grpc.ServicerContext
    ) -> review_pb2.WriterTrustResponse:
        try:
            return self.service.set_writer_trust(request, _authorization(context))
        except Exception as exc:
            _abort(context, exc)
            raise


def build_grpc_server(
    endpoint: str,
    pipeline: IngestPipeline,
    query: QueryService,
    *,
    max_message_bytes: int,
    threads: int = 32,
    review: ReviewService | None = None,
) -> tuple[grpc.Server, int]:
    """A started-ready (not yet started) server bound to ``endpoint``; returns it and the bound port."""
    server = grpc.server(
        ThreadPoolExecutor(max_workers=threads, thread_name_prefix="otel-agent-grpc"),
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.so_reuseport", 0),
            # No BDP probing: the HTTP/2 window stays small until a handler asks for the message, so a call
            # refused from its metadata costs ~64 KB, not megabytes (30 refused 15 MB uploads: +1-2 MiB RSS
            # instead of up to +116 MiB; a 12 MB message over loopback takes no measurably longer).
            ("grpc.http2.bdp_probe", 0),
        ],
        maximum_concurrent_rpcs=threads * 4,
        interceptors=[_Gate(pipeline)],
    )
    handlers = [
        grpc.method_handlers_generic_handler(spec.grpc_service, {"Export": _otlp_handler(spec.name, pipeline)})
        for spec in SIGNALS.values()
    ]
    server.add_generic_rpc_handlers(handlers)
    query_pb2_grpc.add_QueryServiceServicer_to_server(_QueryServicer(query), server)
    if review is not None:
        review_pb2_grpc.add_ReviewServiceServicer_to_server(_ReviewServicer(review), server)
    try:
        port = server.add_insecure_port(endpoint)
    except RuntimeError as exc:  # grpc reports a failed bind as RuntimeError
        raise OSError(f"cannot bind gRPC endpoint {endpoint}: address in use or not available") from exc
    if port == 0:
        raise OSError(f"cannot bind gRPC endpoint {endpoint}")
    return server, port


__all__ = ["build_grpc_server"]
