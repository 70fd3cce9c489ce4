"""A hint in the log when a client speaks the wrong protocol to the HTTP port.

uvicorn answers bytes that are not HTTP/1.1 with ``400`` and logs ``Invalid HTTP request received.`` and nothing
more (it keeps no detail of the request). The usual cause is an OTLP exporter configured for gRPC (HTTP/2) but
pointed at the OTLP/HTTP port, or one speaking TLS (``https://``) to a plain-text port; the filter below keeps
uvicorn's line and adds what to check, naming the receiver's gRPC address when it has one.
"""

from __future__ import annotations

import logging

INVALID_REQUEST = "Invalid HTTP request received."


class WrongProtocolHint(logging.Filter):
    """Rewrites uvicorn's invalid-request line (logger ``uvicorn.error``); every other record passes as is."""

    def __init__(self) -> None:
        super().__init__()
        self.grpc_address: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the hint to uvicorn's line; keep every record."""
        if record.msg == INVALID_REQUEST and not record.args:
            grpc = f"the gRPC port ({self.grpc_address})" if self.grpc_address else "a gRPC port"
            record.msg = (
                f"{INVALID_REQUEST[:-1]} on the OTLP/HTTP port: not HTTP/1.1. A gRPC exporter (HTTP/2) must send "
                f"to {grpc}, or use OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf here; a client using https:// "
                "must use http:// (this port speaks plain text)"
            )
        return True


HINT = WrongProtocolHint()


def install(grpc_address: str | None = None) -> None:
    """Attach the hint to uvicorn's logger once; ``grpc_address``: the receiver's, to name in the hint."""
    logger = logging.getLogger("uvicorn.error")
    if HINT not in logger.filters:
        logger.addFilter(HINT)
    if grpc_address is not None:
        HINT.grpc_address = grpc_address
