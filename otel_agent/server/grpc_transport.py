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

from otel_agent.errors import OtelAgentError, log_error_reply, status_for
from otel_agent.fold.decode import PROTOBUF
from otel_agent.server.api import ApiMethod, api_methods, parse_request
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.replies import export_response, retry_delay_s
from otel_agent.server.review_service import ReviewService
from otel_agent.signals import SIGNALS

log = logging.getLogger(__name__)


def _method(service: str, name: str) -> str:
    return f"/{service}/{name}"


OTLP_METHODS = {_method(spec.grpc_service, "Export"): spec.name for spec in SIGNALS.values()}
"""gRPC method path → signal name."""


def method_roles(api: Sequence[ApiMethod]) -> dict[str, str]:
    """The role each method needs: checked by ``_Gate`` before the message is read, and by the service again."""
    return {**dict.fromkeys(OTLP_METHODS, "ingest"), **{_method(m.service, m.name): m.role for m in api}}


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

    def __init__(self, pipeline: IngestPipeline, roles: dict[str, str]) -> None:
        self.pipeline = pipeline
        self.roles = roles

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method
        role = self.roles.get(method)
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


def _api_handler(method: ApiMethod) -> grpc.RpcMethodHandler:
    """Bytes in, bytes out: the body is parsed by ``parse_request`` (garbage is INVALID_ARGUMENT, not the
    INTERNAL a generated deserializer's failure gives), and the call runs on the API's own pool."""

    def handle(payload: bytes, context: grpc.ServicerContext) -> bytes:
        try:
            request = parse_request(method.request_cls, PROTOBUF, payload)
            return method.submit(request, _authorization(context), lambda m: m.SerializeToString()).result()
        except Exception as exc:
            _abort(context, exc, f"gRPC {method.service}/{method.name}")
            raise  # unreachable: abort raises

    return grpc.unary_unary_rpc_method_handler(handle, request_deserializer=None, response_serializer=None)


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
    api_list = api_methods(query, review)
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
        interceptors=[_Gate(pipeline, method_roles(api_list))],
    )
    handlers = [
        grpc.method_handlers_generic_handler(spec.grpc_service, {"Export": _otlp_handler(spec.name, pipeline)})
        for spec in SIGNALS.values()
    ]
    api: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
    for method in api_list:
        api.setdefault(method.service, {})[method.name] = _api_handler(method)
    handlers += [grpc.method_handlers_generic_handler(service, methods) for service, methods in api.items()]
    server.add_generic_rpc_handlers(handlers)
    try:
        port = server.add_insecure_port(endpoint)
    except RuntimeError as exc:  # grpc reports a failed bind as RuntimeError
        raise OSError(f"cannot bind gRPC endpoint {endpoint}: address in use or not available") from exc
    if port == 0:
        raise OSError(f"cannot bind gRPC endpoint {endpoint}")
    return server, port


__all__ = ["build_grpc_server"]
