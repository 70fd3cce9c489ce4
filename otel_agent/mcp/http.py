"""``/mcp`` on a receiver's HTTP endpoint: MCP's streamable HTTP transport (the official SDK's), stateless and
answering JSON, with the tokens and roles of ``POST /v1/query``: every request needs the ``query`` role (401
without a known token, 403 without the role, when the receiver has a tokens file), and the review tools the
``review`` role of the same request's token (checked when they write). A face of the receiver
(``server.receiver.Face``), given to it by ``otel_agent.main``.

The SDK's session manager runs inside the receiver's event loop (uvicorn's, which serves OTLP too): it is started
by the first MCP request, and its tools run on worker threads (the SDK runs synchronous tools off the loop), so a
slow read never holds an OTLP request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from otel_agent.errors import OtelAgentError, PermissionDeniedError
from otel_agent.mcp.backends import ReceiverBackend
from otel_agent.mcp.server import build_server

PATH = "/mcp"


class McpEndpoint:
    """The ASGI endpoint at ``/mcp``: the caller checked for the ``query`` role, then the SDK's transport."""

    def __init__(self, receiver: Any) -> None:
        self.auth = receiver.auth
        self.server = build_server(ReceiverBackend(receiver))
        host = receiver.config.http_endpoint.rpartition(":")[0].strip("[]") or "127.0.0.1"
        self.server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True, host=host)
        self.manager = self.server.session_manager
        self._running: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _run(self) -> None:
        assert self._running is not None
        assert self._stop is not None
        async with self.manager.run():
            self._running.set()
            await self._stop.wait()

    async def _started(self) -> None:
        if self._running is None:  # the first request, on the server's loop
            self._running, self._stop = asyncio.Event(), asyncio.Event()
            self._loop = asyncio.get_running_loop()
            self._task = self._loop.create_task(self._run())
        await self._running.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            self.auth.authenticate(headers.get("authorization"), "query")
        except OtelAgentError as exc:
            status = 403 if isinstance(exc, PermissionDeniedError) else 401
            await _refuse(send, status, str(exc))
            return
        await self._started()
        await self.manager.handle_request(scope, receive, send)

    def close(self) -> None:
        """Stop the session manager (if the loop still runs; a stopped server took its tasks with it)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(stop.set)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="otel-agent"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpFace:
    """The receiver's ``mcp`` face: one route, ``/mcp`` (every method the transport uses)."""

    name = "mcp"

    def __init__(self, receiver: Any) -> None:
        self.endpoint = McpEndpoint(receiver)
        self.routes: list[BaseRoute] = [Route(PATH, endpoint=self.endpoint, methods=["GET", "POST", "DELETE"])]

    def close(self) -> None:
        """Stop the SDK's session manager."""
        self.endpoint.close()


def receiver_mcp(receiver: Any) -> McpFace:
    """MCP on ``receiver``'s HTTP endpoint (``otel-agent serve``)."""
    return McpFace(receiver)
