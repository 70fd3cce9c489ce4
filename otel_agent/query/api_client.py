"""The one HTTP client of the receiver's own API (query, review, writer trust): every CLI command that talks to
a receiver goes through ``ReceiverClient``.

Requests and replies are the generated protobuf messages of proto/otel_agent/api/v1 (``application/x-protobuf``),
so no caller builds camelCase dicts; query results come back as Arrow IPC and become a ``QueryResult`` exactly as
a local read does. Retryable answers (429, 503) are retried a few times, honouring ``Retry-After``.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import status_pb2

from otel_agent.api.v1 import query_pb2, review_pb2
from otel_agent.errors import (
    ConfigError,
    InvalidPayloadError,
    NotFoundError,
    OtelAgentError,
    PayloadTooLargeError,
    PermissionDeniedError,
    QueryRejectedError,
    QueryTimeoutError,
    QueueFullError,
    ShuttingDownError,
    UnauthenticatedError,
    UnsupportedMediaTypeError,
)
from otel_agent.query.readonly import QueryResult, from_ipc

M = TypeVar("M", bound=Message)

DEFAULT_TIMEOUT_S = 120.0
RETRIES = 3
MAX_RETRY_WAIT_S = 5.0
_PROTOBUF = "application/x-protobuf"
_TRUNCATED_BY = {query_pb2.TRUNCATION_ROWS: "rows", query_pb2.TRUNCATION_BYTES: "bytes"}
# HTTP status of an error reply → the error raised here (the inverse of otel_agent.errors' table).
_ERRORS: dict[int, type[OtelAgentError]] = {
    400: InvalidPayloadError,
    401: UnauthenticatedError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: QueryTimeoutError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaTypeError,
    429: QueueFullError,
    503: ShuttingDownError,
}


class ReceiverUnreachableError(OtelAgentError):
    """The receiver named for a query did not answer."""


class ReceiverAddressError(ConfigError):
    """A ``--receiver`` value that is not an HTTP address."""


def receiver_url(address: str) -> str:
    """``http://HOST:PORT`` for ``HOST:PORT``, ``localhost:4318``, ``[::1]:4318`` or an http(s) URL (kept as
    given, without a trailing slash). Anything else is ``ReceiverAddressError`` naming what is wrong."""
    text = (address or "").strip()
    hint = "give HOST:PORT (e.g. 127.0.0.1:4318) or http://HOST:PORT"
    if not text:
        raise ReceiverAddressError(f"--receiver is empty: {hint}")
    scheme, sep, _ = text.partition("://")
    if not sep:
        text = "http://" + text
    elif scheme.lower() not in ("http", "https"):
        raise ReceiverAddressError(f"--receiver {address!r}: unsupported scheme {scheme!r}; {hint}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ReceiverAddressError(f"--receiver {address!r}: {exc}; {hint}") from None
    if not parts.hostname:
        raise ReceiverAddressError(f"--receiver {address!r}: no host; {hint}")
    if port is None and not sep:
        raise ReceiverAddressError(f"--receiver {address!r}: no port; {hint}")
    if parts.query or parts.fragment:
        raise ReceiverAddressError(f"--receiver {address!r}: a query or fragment is not part of an address; {hint}")
    return text.rstrip("/")


class ReceiverClient:
    """Calls to one receiver's HTTP API, with an optional bearer token."""

    def __init__(self, address: str, token: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = receiver_url(address)
        self.token = token
        self.timeout_s = timeout_s

    def query(self, sql: str, params: list[Any] | None = None, *, max_rows: int = 0, max_bytes: int = 0) -> QueryResult:
        """Run one read statement; the result carries every DuckDB type exactly (Arrow IPC)."""
        request = query_pb2.QueryRequest(
            sql=sql,
            max_rows=max(0, max_rows),
            max_bytes=max(0, max_bytes),
            format=query_pb2.RESULT_FORMAT_ARROW_IPC,
        )
        for p in params or []:
            request.params.append(json_format.ParseDict(p, struct_pb2.Value()))
        reply = self._call("/v1/query", request, query_pb2.QueryResponse, QueryRejectedError)
        try:
            table = from_ipc(reply.arrow_ipc)
        except Exception as exc:  # pyarrow raises several types for a broken stream
            raise OtelAgentError(f"receiver {self.url} sent a result that is not Arrow IPC: {exc}") from exc
        return QueryResult(
            [c.name for c in reply.columns],
            [c.type for c in reply.columns],
            table,
            reply.truncated,
            reply.truncated_reason,
            _TRUNCATED_BY.get(reply.truncated_by, ""),
        )

    def review(self, request: review_pb2.ReviewRequest) -> review_pb2.ReviewResponse:
        return self._call("/v1/review", request, review_pb2.ReviewResponse, InvalidPayloadError)

    def set_writer_trust(self, request: review_pb2.WriterTrustRequest) -> review_pb2.WriterTrustResponse:
        return self._call("/v1/writer_trust", request, review_pb2.WriterTrustResponse, InvalidPayloadError)

    def alert_decision(self, body: dict[str, Any]) -> dict[str, Any]:
        """Record an acknowledge / silence decision on an alert (``POST /v1/alerts/decision``, JSON: the review
        role); returns the stored event."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            reply = requests.post(self.url + "/v1/alerts/decision", json=body, headers=headers, timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise ReceiverUnreachableError(f"receiver {self.url} did not answer: {exc}") from exc
        doc = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        if reply.status_code != 200:
            raise OtelAgentError(f"receiver {self.url} refused: {doc.get('error') or reply.status_code}")
        return doc

    def _call(self, path: str, request: Message, reply_cls: type[M], invalid: type[OtelAgentError]) -> M:
        headers = {"Content-Type": _PROTOBUF, "Accept": _PROTOBUF}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        body = request.SerializeToString()
        for attempt in range(RETRIES + 1):
            try:
                resp = requests.post(self.url + path, data=body, headers=headers, timeout=self.timeout_s)
            except requests.RequestException as exc:
                raise ReceiverUnreachableError(f"receiver {self.url} did not answer: {exc}") from exc
            if resp.status_code in (429, 503) and attempt < RETRIES:
                time.sleep(_retry_after(resp))
                continue
            break
        if resp.status_code != 200:
            raise self._error(resp, invalid)
        try:
            return reply_cls.FromString(resp.content)
        except DecodeError as exc:
            raise OtelAgentError(f"receiver {self.url} sent an unreadable {reply_cls.DESCRIPTOR.name}") from exc

    def _error(self, resp: requests.Response, invalid: type[OtelAgentError]) -> OtelAgentError:
        message = resp.text.strip()[:500]
        if resp.headers.get("content-type", "").startswith(_PROTOBUF):
            with contextlib.suppress(DecodeError):
                message = status_pb2.Status.FromString(resp.content).message
        cls = invalid if resp.status_code == 400 else _ERRORS.get(resp.status_code, OtelAgentError)
        return cls(f"receiver answered {resp.status_code}: {message}")


def _retry_after(resp: requests.Response) -> float:
    try:
        return min(MAX_RETRY_WAIT_S, max(0.1, float(resp.headers.get("retry-after", "1"))))
    except ValueError:
        return 1.0
