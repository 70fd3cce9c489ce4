"""A loopback OTLP/HTTP forwarder that delivers every export request twice to the receiver behind it: an exporter
that retried after a lost acknowledgement, as seen by the receiver (the same spans, ids and all, sent again)."""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class TwiceForwarder:
    """``with TwiceForwarder(receiver.http_address) as fwd:`` then export to ``fwd.url + "/v1/traces"``."""

    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.forwarded = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
                    return self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = []  # the JS SDK's exporter sends its body chunked
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()

            def do_POST(self) -> None:
                body = self._body()
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "content-encoding")}
                status, data, content_type = 502, b"", "application/x-protobuf"
                for _ in range(2):
                    request = urllib.request.Request(outer.target + self.path, data=body, headers=headers)
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, data = answer.status, answer.read()
                        content_type = answer.headers.get("Content-Type", content_type)
                outer.forwarded += 1
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> TwiceForwarder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
