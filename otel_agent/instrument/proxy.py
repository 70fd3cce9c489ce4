"""Proxy requests (seed 000's ``proxy_request`` spans): one request an LLM proxy / gateway served for a client.

A proxy request is still a GenAI client inference span — ``{operation} {model}``, CLIENT, with
``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``, usage, ``gen_ai.request.stream``
and the same retry / fallback events as a provider call — recorded by the proxy rather than by the agent. What
the conventions have no name for is under ``otel_agent.proxy.*``: the client the proxy served
(``otel_agent.proxy.client``: an application, API key alias or team, free form) and the number of stream chunks
it relayed (``otel_agent.proxy.stream_chunks``). A fallback attempt's outcome is ``otel_agent.fallback.status``
on the fallback event.

The derived views count it as a provider call (it is one), once: a proxy request recorded inside the agent's own
provider call (the same request seen from both ends) is nested and fills only what the outer call lacks; the
``proxy_requests`` view lists every proxy request, nested or not."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.trace import Link, Span, SpanKind

from . import attributes as A
from ._scope import AttributeValue, Scope, put
from ._validate import count, text
from .calls import ProviderCall
from .errors import InvalidValueError


class ProxyRequest(ProviderCall):
    """A request an LLM proxy served: span ``{operation} {model}`` (CLIENT), record kind ``proxy_request``."""

    __slots__ = ("_chunks", "client", "stream")

    def __init__(
        self,
        client: str,
        provider: str,
        model: str,
        *,
        operation: str = A.OP_CHAT,
        stream: bool | None = None,
        capture_content: bool | None = None,
    ) -> None:
        super().__init__(provider, model, operation=operation, capture_content=capture_content)
        self.client = client if isinstance(client, str) and client else text(client, "client", self._problems())
        if stream is not None and not isinstance(stream, bool):
            self._bad(InvalidValueError(f"stream must be a bool, got {stream!r}"))
            stream = None
        self.stream = stream
        self._chunks = 0

    def _prepare(self, parent: Scope) -> None:
        """As a provider call, except inside one: the agent's call through this proxy was counted already."""
        if isinstance(parent.handle, ProviderCall):
            self._inherited_capture = parent.capture
            self._run = None  # its cost is the outer call's: not added to the run twice
            return
        super()._prepare(parent)

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        name, kind, attrs, links = super()._open(parent)
        attrs[A.RECORD_KIND] = A.KIND_PROXY_REQUEST
        put(attrs, A.PROXY_CLIENT, self.client)
        put(attrs, A.GEN_AI_REQUEST_STREAM, self.stream)
        return name, kind, attrs, links

    def stream_chunks(self, n: int = 1) -> int:
        """Count ``n`` more stream chunks relayed to the client; returns the total so far."""
        if not self._require_active():
            return self._chunks
        added = count(n, "stream chunks", self._problems())
        self._sync_misuse()
        if added is not None:
            self._chunks += added
        return self._chunks

    def _close(self, span: Span) -> None:
        super()._close(span)
        if self._chunks:
            span.set_attribute(A.PROXY_STREAM_CHUNKS, self._chunks)


proxy_request = ProxyRequest
