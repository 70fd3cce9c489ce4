"""Which raw tables the lifecycle moves, by what key and what time.

Every raw table (``store.shards.RAW_TABLES``) is archived and retained in hourly windows of its span's (or
record's) time. Child rows of a span (events, links, parsed retrieval documents) go with their span: same window,
archived before it and deleted with it. The keys are the re-delivery keys of docs/schema.md; the archive and the
live ∪ archive views deduplicate by them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableSpec:
    table: str
    signal: str
    """The archive's ``signal=`` partition (the table name: one Parquet dataset per raw table)."""
    keys: tuple[str, ...]
    time: str | None
    """The column that places a row in a window; None for span children, placed by their span's end_time."""


SPANS = TableSpec("spans", "spans", ("end_time", "trace_id", "span_id"), "end_time")
SPAN_CHILDREN = (
    TableSpec("span_events", "span_events", ("trace_id", "span_id", "event_index"), None),
    TableSpec("span_links", "span_links", ("trace_id", "span_id", "link_index"), None),
    TableSpec(
        "parsed_retrieval_documents",
        "parsed_retrieval_documents",
        ("trace_id", "span_id", "end_time", "doc_index"),
        "end_time",
    ),
)
LINEAGE_KEYS = TableSpec("lineage_keys", "lineage_keys", ("key", "end_time", "next_key", "kind"), "end_time")
RECORDS = (
    TableSpec("logs", "logs", ("time", "content_hash"), "time"),
    TableSpec("metric_points", "metric_points", ("time", "content_hash"), "time"),
)
ALL = (SPANS, *SPAN_CHILDREN, LINEAGE_KEYS, *RECORDS)
BY_TABLE = {t.table: t for t in ALL}
