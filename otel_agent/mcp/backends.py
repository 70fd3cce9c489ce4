"""Where the MCP tools read and how they write: ``FilesBackend`` (``otel-agent mcp --db FILE…``: one read-only
connection for the server's life; no writes), ``RemoteBackend`` (``--receiver URL``: the receiver's query and
review APIs, with ``--token``), ``ReceiverBackend`` (``/mcp`` inside a receiver: cursors of its connection,
reviews through its writer, the caller's bearer token checked for the ``review`` role on each write).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from otel_agent.errors import PermissionDeniedError
from otel_agent.query.readonly import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S
from otel_agent.read.source import CursorSource, RemoteSource, Source
from otel_agent.read.stores import Where, reading_cursor

READ_ONLY = (
    "this MCP server reads closed files read-only: review through a receiver (otel-agent mcp --receiver URL with a "
    "token holding the review role, or the receiver's /mcp)"
)


@dataclass(frozen=True)
class QueryLimits:
    """The caps of the query tool: those of the receiver's POST /v1/query (or its defaults, over files)."""

    max_rows: int = DEFAULT_MAX_ROWS
    max_bytes: int | None = DEFAULT_MAX_BYTES
    timeout_s: float = DEFAULT_TIMEOUT_S


class Backend(Protocol):
    def reading(self) -> AbstractContextManager[Source]:
        """A source for one tool call."""

    def review(
        self, kind: str, target_id: str, decision: str, reason: str | None, headers: dict[str, str]
    ) -> dict[str, Any]:
        """Append one review (``headers``: the MCP request's, where the transport has them)."""

    def query_limits(self) -> QueryLimits:
        """The caps of untrusted SQL."""

    def close(self) -> None:
        """Release what the backend holds."""


class FilesBackend:
    """Closed store files (several: shards; with an archive), one locked-down read-only connection."""

    def __init__(self, where: Where) -> None:
        from otel_agent.query.client import open_readonly

        self.where = where
        self.con = open_readonly(where.files, where.archive)

    @contextmanager
    def reading(self) -> Iterator[Source]:
        cur = self.con.cursor()
        try:
            yield CursorSource(cur, timeout_s=self.where.timeout_s, con=self.con)
        finally:
            cur.close()

    def review(
        self, kind: str, target_id: str, decision: str, reason: str | None, headers: dict[str, str]
    ) -> dict[str, Any]:
        raise PermissionDeniedError(READ_ONLY)

    def query_limits(self) -> QueryLimits:
        return QueryLimits(timeout_s=self.where.timeout_s)

    def close(self) -> None:
        self.con.close()


class RemoteBackend:
    """A running receiver's APIs: its sandbox, caps and roles apply (the token's)."""

    def __init__(self, where: Where) -> None:
        from otel_agent.query.api_client import ReceiverClient

        self.where = where
        self.client = ReceiverClient(str(where.receiver), where.token, timeout_s=max(where.timeout_s, 60.0))

    @contextmanager
    def reading(self) -> Iterator[Source]:
        yield RemoteSource(self.client)

    def review(
        self, kind: str, target_id: str, decision: str, reason: str | None, headers: dict[str, str]
    ) -> dict[str, Any]:
        from otel_agent.read.reviews import review_where

        # The receiver records the token's principal; the reviewer field names the face it came through.
        return review_where(self.where, kind, target_id, decision, "mcp", reason)

    def query_limits(self) -> QueryLimits:
        return QueryLimits(max_bytes=None)  # the receiver applies its own caps

    def close(self) -> None:
        pass


class ReceiverBackend:
    """Inside a receiver: cursors beside its writer (live ∪ archive where it reads one), its query limits, and
    reviews written through its writer as the principal of the request's bearer token."""

    def __init__(self, receiver: Any) -> None:
        from otel_agent.read.reviews import Reviews

        self.receiver = receiver
        self.reviews = Reviews(receiver.writer)

    @contextmanager
    def reading(self) -> Iterator[Source]:
        config = self.receiver.config
        with reading_cursor(self.receiver.con) as cur:
            yield CursorSource(cur, timeout_s=config.query_timeout_s, con=self.receiver.con)

    def review(
        self, kind: str, target_id: str, decision: str, reason: str | None, headers: dict[str, str]
    ) -> dict[str, Any]:
        who = self.receiver.auth.authenticate(_header(headers, "authorization"), "review")
        name = who.name or "mcp"
        return self.reviews.submit(kind, target_id, decision, name, reason, who.name).as_dict()

    def query_limits(self) -> QueryLimits:
        config = self.receiver.config
        return QueryLimits(config.query_max_rows, config.query_max_bytes, config.query_timeout_s)

    def close(self) -> None:
        pass


def _header(headers: dict[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None
