"""Reading an HTTP request body safely: size limits before and after decompression, content negotiation.

A gzip bomb never expands past the limit: decompression is incremental with ``max_length``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from starlette.requests import ClientDisconnect, Request

from otel_agent.errors import (
    ClientDisconnectedError,
    InvalidPayloadError,
    PayloadTooLargeError,
    UnsupportedMediaTypeError,
)
from otel_agent.fold.decode import JSON, PROTOBUF

CONTENT_TYPES = {
    "application/x-protobuf": PROTOBUF,
    "application/protobuf": PROTOBUF,
    "application/json": JSON,
}
MEDIA_TYPE = {PROTOBUF: "application/x-protobuf", JSON: "application/json"}


def body_format(request: Request) -> str:
    """The payload format named by the request's ``Content-Type``; ``UnsupportedMediaTypeError`` for others."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    fmt = CONTENT_TYPES.get(content_type)
    if fmt is None:
        raise UnsupportedMediaTypeError(
            f"unsupported Content-Type {content_type or '(none)'!r}; use application/x-protobuf or application/json"
        )
    return fmt


def declared_length(request: Request, limit: int) -> int:
    """The body size the client announced (``Content-Length``; 0 when it did not say). Raises
    ``PayloadTooLargeError`` when it is over ``limit``, so the body is never read."""
    declared = request.headers.get("content-length")
    if declared is None or not declared.isdigit():
        return 0
    if int(declared) > limit:
        raise PayloadTooLargeError(f"body of {declared} bytes exceeds the limit of {limit}")
    return int(declared)


async def read_body(request: Request, limit: int, reserve: Callable[[int], None] | None = None) -> bytes:
    """The decoded body, at most ``limit`` bytes both on the wire and after decompression.

    ``reserve(n)`` is called as the body arrives with the bytes it takes so far (the larger of wire and
    decompressed size) and may raise to stop reading (the in-flight bound, see ``IngestPipeline``)."""
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "", "gzip"):
        raise UnsupportedMediaTypeError(f"unsupported Content-Encoding {encoding!r}; use gzip or none")
    declared_length(request, limit)
    inflater = zlib.decompressobj(wbits=31) if encoding == "gzip" else None
    raw = 0
    out = bytearray()
    try:
        async for chunk in request.stream():
            raw += len(chunk)
            if raw > limit:
                raise PayloadTooLargeError(f"body exceeds the limit of {limit} bytes")
            if inflater is None:
                out += chunk
                if reserve is not None:
                    reserve(len(out))
                continue
            data = chunk
            while data:
                try:
                    piece = inflater.decompress(data, limit + 1 - len(out))
                except zlib.error as exc:
                    raise InvalidPayloadError(f"invalid gzip body: {exc}") from exc
                out += piece
                if len(out) > limit:
                    raise PayloadTooLargeError(f"body exceeds the limit of {limit} bytes after decompression")
                data = inflater.unconsumed_tail
                if inflater.eof:
                    break
            if reserve is not None:
                reserve(max(raw, len(out)))
    except ClientDisconnect:
        # The client went away mid-body: nothing to store and no one to answer; the transport logs it as
        # one short line, like any refusal, not as an unexpected error with a traceback.
        raise ClientDisconnectedError("the client disconnected before its body was complete") from None
    if inflater is not None:
        if not inflater.eof:
            raise InvalidPayloadError("invalid gzip body: truncated stream")
        out += inflater.flush()
    return bytes(out)
