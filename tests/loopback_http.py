"""A small HTTP server on a loopback port for tests (the fake model servers, the re-sending forwarder): started by
``with``, stopped at its end."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


def reply(handler: BaseHTTPRequestHandler, status: int, content_type: str, data: bytes) -> None:
    """Answer ``handler``'s request with ``data`` as one body of ``content_type``."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1 and an ephemeral port on a thread while the ``with`` block runs."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
