"""OTLP over gRPC: the three Export services plus the project's QueryService and ReviewService, on one server.

The OTLP handlers take the request as raw bytes (identity deserializer) rather than as parsed messages:
the bytes go to a decode worker process, which parses them with the generated OTLP messages, so the
parse happens once and off the gRPC threads. Service and method names come from the generated
descriptors of opentelemetry-proto.
"""

from __future__ import annotations

import logging
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otel_agent.errors import OtelAgentError, log_error_reply, status_for
from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.decode import PROTOBUF
from otel_agent.server.api import ApiMethod, api_methods, parse_request
from otel_agent.server.pipeline import IngestPipeline
from otel_agent.server.query_service import QueryService
from otel_agent.server.review_service import ReviewService

log = logging.getLogger(__name__)

RETRY_AFTER_S = 1

# signal → (fully-qualified service, response message, partial-success field holding the rejected count)
OTLP_SERVICES: dict[str, tuple[str, Any, str]] = {
    "traces": (
        trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name,
        trace_service_pb2.ExportTraceServiceResponse,
        "rejected_spans",
    ),
    "logs": (
        logs_service_pb2.DESCRIPTOR.services_by_name["LogsService"].full_name,
        logs_service_pb2.ExportLogsServiceResponse,
        "rejected_log_records",
    ),
    "metrics": (
        metrics_service_pb2.DESCRIPTOR.services_by_name["MetricsService"].full_name,
        metrics_service_pb2.ExportMetricsServiceResponse,
        "rejected_data_points",
    ),
}


def export_response(signal: str, batch: FoldedBatch) -> Any:
    """The Export*ServiceResponse for a stored batch, with partial success when items were rejected."""
    _, response_cls, field = OTLP_SERVICES[signal]
    response = response_cls()
    if batch.rejected:
        setattr(response.partial_success, field, batch.rejected)
        response.partial_success.error_message = batch.error_message
    return response


def retry_delay_s(exc: BaseException) -> float:
    """The delay to suggest for a retryable error: the writer's estimate when full, else ~1 s, jittered."""
    suggested = getattr(exc, "retry_after_s", None)
    return suggested if suggested is not None else RETRY_AFTER_S * random.uniform(0.5, 1.5)


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


def _authorization(context: grpc.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata():
        if key == "authorization":
            return value
    return None


def _otlp_handler(signal: str, pipeline: IngestPipeline) -> grpc.RpcMethodHandler:
    def export(payload: bytes, context: grpc.ServicerContext) -> bytes:
        try:
            batch = pipeline.export(signal, PROTOBUF, payload, _authorization(context))
        except Exception as exc:
            _abort(context, exc, f"gRPC {OTLP_SERVICES[signal][0]}/Export")
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
    server = grpc.server(
        ThreadPoolExecutor(max_workers=threads, thread_name_prefix="otel-agent-grpc"),
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=threads * 4,
    )
    handlers = [
        grpc.method_handlers_generic_handler(service, {"Export": _otlp_handler(signal, pipeline)})
        for signal, (service, _, _) in OTLP_SERVICES.items()
    ]
    api: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
    for method in api_methods(query, review):
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


__all__ = ["build_grpc_server", "export_response", "OTLP_SERVICES"]
