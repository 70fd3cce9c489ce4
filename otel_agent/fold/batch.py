"""What a fold produces: Arrow tables ready for one INSERT each, plus the partial-success counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

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
    errors: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return self.items - self.rejected


def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type) for f in schema], schema=schema)
