"""How a reader reaches a store: ``Where`` names it (files, shards, an archive, or a receiver), ``open_source``
opens it as a ``Source`` for the time of a ``with`` block.

Every choice is an argument: several ``dbs`` are shards read as one; ``archive`` makes the raw tables live ∪
archive (``lifecycle.reading``); ``receiver`` reads through that receiver's query API. One file held by a
running receiver (its ``<db>.receiver.json``) is read through that receiver too — unless an archive is named,
which only the files can add.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb

from otel_agent.config import DEFAULT_DB
from otel_agent.query.readonly import DEFAULT_TIMEOUT_S
from otel_agent.read.source import CursorSource, RemoteSource, Source
from otel_agent.store import database


@dataclass(frozen=True)
class Where:
    """A store to read: files (several: shards), with an optional archive, or a receiver's address."""

    dbs: tuple[str, ...] = field(default_factory=tuple)
    receiver: str | None = None
    token: str | None = None
    archive: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def files(self) -> list[str]:
        return list(self.dbs) or [DEFAULT_DB]

    def describe(self) -> str:
        """What a reader reads, in words (for a header; file names only)."""
        if self.receiver:
            return f"receiver {self.receiver}"
        return ", ".join(self.files) + (f" + archive {self.archive}" if self.archive else "")


def receiver_of(where: Where) -> str | None:
    """The receiver a read goes through: the named one, else the one holding the single file (no archive)."""
    if where.receiver:
        return where.receiver
    if len(where.files) == 1 and not where.archive:
        from otel_agent.query.client import live_receiver

        return live_receiver(where.files[0])
    return None


@contextmanager
def open_source(where: Where) -> Iterator[Source]:
    """A ``Source`` over ``where`` for the block: a receiver's query API, or a locked-down read-only connection
    over the file(s) (``query.client.open_readonly``), closed when the block ends."""
    url = receiver_of(where)
    if url:
        from otel_agent.query.api_client import ReceiverClient

        yield RemoteSource(ReceiverClient(url, where.token, timeout_s=max(where.timeout_s, 60.0)))
        return
    from otel_agent.query.client import open_readonly

    con = open_readonly(where.files, where.archive)
    try:
        yield CursorSource(con.cursor(), timeout_s=where.timeout_s, con=con)
    finally:
        con.close()


@contextmanager
def reading_cursor(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of a live connection for readers (a receiver's console and MCP; ``otel-agent ui``'s connection):
    live ∪ archive where the receiver reads an archive (``store.database.reading_cursor``)."""
    with database.reading_cursor(con) as cur:
        yield cur
