"""The receiver's own API as both transports see it: one table of methods (gRPC name, HTTP path, request class,
the call), how a request body is parsed, and the bounded pools the calls run on.

Both transports take the request as bytes and parse it here, so a garbage body is ``InvalidPayloadError``
(INVALID_ARGUMENT / 400, one short log line) on both, never INTERNAL with a traceback (issue 11, item 4). The
calls run on their own pools, never on the transports' threads: a slow query waits for a query worker, not for
a thread HTTP ingest also needs, and a full pool answers at once with a retryable error (issue 11, item 5).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from otel_agent.errors import InvalidPayloadError, QueueFullError
from otel_agent.fold.decode import JSON

T = TypeVar("T")
# Longest excerpt of a parser's complaint put in a reply or a log line.
_MAX_DETAIL = 200


class ApiBusyError(QueueFullError):
    """Every worker of an API pool is busy and its waiting room is full (429 / RESOURCE_EXHAUSTED, retryable)."""


class BoundedPool:
    """A thread pool that admits at most ``workers + waiting`` calls at a time and refuses the rest at once."""

    def __init__(self, name: str, workers: int, waiting: int, retry_after_s: float = 1.0) -> None:
        self.name = name
        self.capacity = workers + waiting
        self.retry_after_s = retry_after_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"otel-agent-{name}")
        self._lock = threading.Lock()
        self._admitted = 0

    @property
    def admitted(self) -> int:
        """Calls admitted and not yet finished (running or waiting)."""
        return self._admitted

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the pool, or raise ``ApiBusyError`` at once when the pool is full."""
        with self._lock:
            if self._admitted >= self.capacity:
                raise ApiBusyError(
                    f"the {self.name} pool is full ({self.capacity} calls running or waiting); retry later",
                    retry_after_s=self.retry_after_s,
                )
            self._admitted += 1
        try:
            future = self._executor.submit(fn)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(lambda _: self._release())
        return future

    def _release(self) -> None:
        with self._lock:
            self._admitted -= 1

    def shutdown(self) -> None:
        """Wait for the admitted calls: each ends by its own deadline (a waiting query past it ends at once)."""
        self._executor.shutdown(wait=True)


def parse_request(message_cls: type[Message], fmt: str, payload: bytes) -> Message:
    """The request message of ``payload`` (protobuf, or protobuf-JSON when ``fmt`` is JSON). Anything that is not
    one, however broken (bad wire types, invalid UTF-8, nesting past protobuf's limit, JSON that is not an object,
    lone surrogates), is ``InvalidPayloadError`` with a one-line reason (no traceback)."""
    message = message_cls()
    try:
        if fmt == JSON:
            doc = json.loads(payload)
            if not isinstance(doc, dict):
                raise ValueError(f"the body is a JSON {type(doc).__name__}, not an object")
            json_format.ParseDict(doc, message, ignore_unknown_fields=True)
        else:
            message.ParseFromString(payload)
        # Strings with lone surrogates get past the JSON parser; they cannot be stored or encoded.
        message.SerializeToString()
    except Exception as exc:  # every parser failure is the client's: protobuf raises several unrelated types
        detail = " ".join(str(exc).split())[:_MAX_DETAIL] or type(exc).__name__
        # Logged once, by the transport that answers it (errors.log_error_reply), like every refusal.
        raise InvalidPayloadError(f"invalid {message_cls.DESCRIPTOR.name}: {detail}") from None
    return message


@dataclass(frozen=True)
class ApiMethod:
    """One method of the API. ``submit(request, authorization, encode)`` checks the caller, admits the call to
    its pool and returns a future of ``encode(response)`` (encoding runs on the pool too, off the event loop)."""

    service: str  # fully-qualified gRPC service name
    name: str  # gRPC method name
    http_path: str
    request_cls: type[Message]
    role: str  # the role the caller needs (checked again by the service)
    submit: Callable[[Message, str | None, Callable[[Message], Any]], Future[Any]]


def api_methods(query: Any, review: Any | None) -> list[ApiMethod]:
    """Every method of the QueryService and (when given) the ReviewService."""
    from otel_agent.api.v1 import query_pb2, review_pb2

    query_service = query_pb2.DESCRIPTOR.services_by_name["QueryService"].full_name
    methods = [ApiMethod(query_service, "Query", "/v1/query", query_pb2.QueryRequest, "query", query.submit)]
    if review is not None:
        review_service = review_pb2.DESCRIPTOR.services_by_name["ReviewService"].full_name
        methods += [
            ApiMethod(review_service, "Review", "/v1/review", review_pb2.ReviewRequest, "review", review.submit_review),
            ApiMethod(
                review_service,
                "SetWriterTrust",
                "/v1/writer_trust",
                review_pb2.WriterTrustRequest,
                "review",
                review.submit_writer_trust,
            ),
        ]
    return methods
