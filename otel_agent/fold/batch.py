"""What a fold produces: Arrow tables ready for one INSERT each, plus the partial-success counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from otel_agent.errors import InvalidPayloadError

RESOURCE_SCOPE_FIELDS = [
    pa.field("service_name", pa.string()),
    pa.field("resource_attributes", pa.string()),
    pa.field("resource_dropped_attributes_count", pa.uint32()),
    pa.field("resource_entity_refs", pa.string()),
    pa.field("resource_schema_url", pa.string()),
    pa.field("scope_name", pa.string()),
    pa.field("scope_version", pa.string()),
    pa.field("scope_attributes", pa.string()),
    pa.field("scope_dropped_attributes_count", pa.uint32()),
    pa.field("scope_schema_url", pa.string()),
]

INGEST_FIELDS = [
    pa.field("principal", pa.string()),
    pa.field("received_at", pa.timestamp("us", tz="UTC")),
]


@dataclass
class FoldedBatch:
    """One request's rows. ``items`` counts spans / log records / data points offered, ``rejected`` those
    refused as invalid (reported back as OTLP partial success)."""

    signal: str
    tables: dict[str, pa.Table]
    items: int
    rejected: int = 0
    error_message: str = ""
    payload_bytes: int = 0

    @property
    def accepted(self) -> int:
        return self.items - self.rejected


TIMESTAMP_LIMIT = 1 << 63
"""Timestamps are stored as TIMESTAMP_NS (signed 64-bit nanoseconds); OTLP's fixed64 can say more."""

BEYOND_TIMESTAMPS = "a timestamp after the year 2262 (2^63 ns) cannot be stored"


def quoted(text: str, limit: int = 40) -> str:
    """``text`` for an error message: repr, cut to ``limit`` characters (names come from the sender)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


@dataclass
class Rejections:
    """Items of one request refused one by one (reported as OTLP partial success): their count and the first
    few reasons."""

    what: str
    count: int = 0
    messages: list[str] = field(default_factory=list)

    def add(self, message: str, count: int = 1) -> None:
        self.count += count
        if len(self.messages) < 5:
            self.messages.append(message)

    @property
    def message(self) -> str:
        return "; ".join(self.messages)

    def check(self, items: int) -> None:
        """Refuse the whole request (400) when every item of it was refused."""
        if items and self.count == items:
            raise InvalidPayloadError(f"every {self.what} was invalid: {self.message}")


def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type) for f in schema], schema=schema)
