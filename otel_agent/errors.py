"""Exception classes and the one table that maps them to gRPC codes and HTTP statuses.

Modelled on the Collector's otlpreceiver: transports never decide status codes themselves; they raise or
catch one of these and look the answer up here, so gRPC and HTTP always agree on what is retryable.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass


class OtelAgentError(Exception):
    """Base class of every error this package raises on purpose."""


class InvalidPayloadError(OtelAgentError):
    """The request body cannot be decoded, or every item in it is invalid (permanent: 400)."""


class ClientDisconnectedError(InvalidPayloadError):
    """The client closed the connection before its body was complete (nothing stored; the reply goes nowhere)."""


class PayloadTooLargeError(OtelAgentError):
    """The body, compressed or after decompression, is larger than the configured limit (413)."""


class UnsupportedMediaTypeError(OtelAgentError):
    """Content-Type or Content-Encoding the receiver does not speak (415)."""


class QueueFullError(OtelAgentError):
    """In-flight data is at its bound; the client should retry later (429 / RESOURCE_EXHAUSTED)."""

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ShuttingDownError(OtelAgentError):
    """The receiver is stopping and accepts nothing new (503 / UNAVAILABLE)."""


class DecoderUnavailableError(OtelAgentError):
    """A decode worker died while holding the request; the workers are being replaced (503 / UNAVAILABLE)."""


class StorageError(OtelAgentError):
    """The commit to DuckDB failed; nothing of the request was acknowledged (503 / UNAVAILABLE)."""


class UnauthenticatedError(OtelAgentError):
    """No bearer token, or one the tokens file does not know (401)."""


class PermissionDeniedError(OtelAgentError):
    """The token is valid but its principal lacks the role the call needs (403)."""


class QueryRejectedError(OtelAgentError):
    """A read-only query was refused: not a read statement, or it touches files or settings (400)."""


class QueryTimeoutError(OtelAgentError):
    """A read-only query ran past its time limit and was interrupted (504-like; reported as 408)."""


class StoreOpenError(OtelAgentError):
    """A store file cannot be opened: missing, corrupted, truncated, another format, not writable, held by
    another process, or its path runs under a regular file. The message names the file and the cause."""


class SchemaVersionError(StoreOpenError):
    """The DuckDB file was written by another schema version of otel_agent, or is not an otel_agent store."""


class StoreInUseError(StoreOpenError):
    """The store is already open for writing in this process (a receiver or an exporter holds it)."""


class ConfigError(OtelAgentError):
    """A setting has a value that cannot be used."""


class StoreHeldError(StoreOpenError, ConfigError):
    """Another process (a receiver, an exporter, a DuckDB shell) holds the store file's lock."""


class EndpointUnavailableError(ConfigError, OSError):
    """An endpoint cannot be listened on: its port is in use, or its address is not this machine's.
    (An OSError too, as the failed bind it reports.)"""


class NotFoundError(OtelAgentError):
    """A referenced record (review target, artifact, run) does not exist."""


@dataclass(frozen=True)
class StatusMapping:
    """``grpc_code`` is the name of a ``grpc.StatusCode`` member (this module does not import grpc, so the
    decode worker processes stay small); ``code`` is its number, as used in ``google.rpc.Status``."""

    grpc_code: str
    code: int
    http_status: int
    retryable: bool


_MAPPING: dict[type[OtelAgentError], StatusMapping] = {
    InvalidPayloadError: StatusMapping("INVALID_ARGUMENT", 3, 400, False),
    PayloadTooLargeError: StatusMapping("INVALID_ARGUMENT", 3, 413, False),
    UnsupportedMediaTypeError: StatusMapping("INVALID_ARGUMENT", 3, 415, False),
    QueryRejectedError: StatusMapping("INVALID_ARGUMENT", 3, 400, False),
    NotFoundError: StatusMapping("NOT_FOUND", 5, 404, False),
    QueryTimeoutError: StatusMapping("DEADLINE_EXCEEDED", 4, 408, False),
    QueueFullError: StatusMapping("RESOURCE_EXHAUSTED", 8, 429, True),
    ShuttingDownError: StatusMapping("UNAVAILABLE", 14, 503, True),
    StorageError: StatusMapping("UNAVAILABLE", 14, 503, True),
    DecoderUnavailableError: StatusMapping("UNAVAILABLE", 14, 503, True),
    UnauthenticatedError: StatusMapping("UNAUTHENTICATED", 16, 401, False),
    PermissionDeniedError: StatusMapping("PERMISSION_DENIED", 7, 403, False),
}

_INTERNAL = StatusMapping("INTERNAL", 13, 500, False)
_OUT_OF_MEMORY = StatusMapping("UNAVAILABLE", 14, 503, True)
"""DuckDB's OutOfMemoryException (matched by name: this module imports no driver): the store's memory limit was
reached by work beside the request (a commit, a maintenance step); a retry may find it free. Not a bug: no 500."""


def status_for(error: BaseException) -> StatusMapping:
    """The gRPC code, HTTP status and retryability of an error (unknown errors are INTERNAL / 500)."""
    for cls in type(error).__mro__:
        mapping = _MAPPING.get(cls)  # type: ignore[arg-type]
        if mapping is not None:
            return mapping
    if type(error).__name__ == "OutOfMemoryException" and type(error).__module__.startswith("duckdb"):
        return _OUT_OF_MEMORY
    return _INTERNAL


_LOGGED_MESSAGE_CHARS = 200


def log_error_reply(log: logging.Logger, exc: BaseException, where: str) -> None:
    """The one log line of an error reply. A refusal the package raised on purpose (bad input, no token, too
    large) is the client's to fix and is answered with the reason: one short INFO line, the message cut to 200
    characters, so a misbehaving client cannot flood the log. Retryable answers (full, stopping) are routine and
    counted in /healthz, not logged. Anything else is a bug: logged with its traceback."""
    if not isinstance(exc, OtelAgentError):
        log.error("unexpected error in %s", where, exc_info=exc)
        return
    mapping = status_for(exc)
    if mapping.retryable:
        return
    message = " ".join(str(exc).split())  # one line, whatever the sender put in it
    if len(message) > _LOGGED_MESSAGE_CHARS:
        message = message[:_LOGGED_MESSAGE_CHARS] + "…"
    log.info("%s: refused with %d %s: %s", where, mapping.http_status, mapping.grpc_code, message)
