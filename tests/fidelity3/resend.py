"""A loopback OTLP/HTTP forwarder that delivers every export request twice to the receiver behind it: an exporter
that retried after a lost acknowledgement, as seen by the receiver (the same spans, ids and all, sent again)."""

from __future__ import annotations

import urllib.request
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_http import LoopbackServer, reply


class TwiceForwarder(LoopbackServer):
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
                reply(self, status, content_type, data)

        super().__init__(Handler)

    @property
    def url(self) -> str:
        return self.origin
