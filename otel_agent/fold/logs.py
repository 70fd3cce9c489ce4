"""ExportLogsServiceRequest → ``logs`` Arrow table."""

from __future__ import annotations

import pyarrow as pa
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_agent.errors import InvalidPayloadError
from otel_agent.fold.anyvalue import plain
from otel_agent.fold.batch import (
    BEYOND_TIMESTAMPS,
    INGEST_FIELDS,
    RESOURCE_SCOPE_FIELDS,
    TIMESTAMP_LIMIT,
    FoldedBatch,
    Rejections,
)
from otel_agent.fold.common import (
    extend_resource_scope,
    json_text,
    kv_list_json,
    one_table_batch,
    scope_groups,
)
from otel_agent.fold.redact import Redactor

LOGS_SCHEMA = pa.schema(
    [
        pa.field("time", pa.timestamp("ns")),
        pa.field("observed_time", pa.timestamp("ns")),
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("flags", pa.uint32()),
        pa.field("severity_number", pa.int32()),
        pa.field("severity_text", pa.string()),
        pa.field("event_name", pa.string()),
        pa.field("body", pa.string()),
        pa.field("attributes", pa.string()),
        pa.field("dropped_attributes_count", pa.uint32()),
        *RESOURCE_SCOPE_FIELDS,
        pa.field("content_hash", pa.string()),
        *INGEST_FIELDS,
    ]
)


def _optional_id(raw: bytes, size: int, what: str, index: int) -> str | None:
    if not raw:
        return None
    if len(raw) != size:
        raise InvalidPayloadError(f"log record {index}: {what} must be {size} bytes (got {len(raw)})")
    return raw.hex() if any(raw) else None


def fold_logs(
    request: ExportLogsServiceRequest, redactor: Redactor, principal: str | None, received_at_us: int
) -> FoldedBatch:
    cols: dict[str, list] = {name: [] for name in LOGS_SCHEMA.names}
    items = 0
    rejected = Rejections("log record")
    for res, sl, base in scope_groups(request.resource_logs, "scope_logs", redactor):
        n = 0
        for rec in sl.log_records:
            trace_id = _optional_id(rec.trace_id, 16, "trace_id", items)
            span_id = _optional_id(rec.span_id, 8, "span_id", items)
            items += 1
            time, observed = rec.time_unix_nano, rec.observed_time_unix_nano
            if (time | observed) >= TIMESTAMP_LIMIT:
                rejected.add(f"log record {items - 1}: {BEYOND_TIMESTAMPS}")
                continue
            n += 1
            cols["trace_id"].append(trace_id)
            cols["span_id"].append(span_id)
            cols["time"].append(time)
            cols["observed_time"].append(observed)
            cols["flags"].append(rec.flags)
            cols["severity_number"].append(rec.severity_number)
            cols["severity_text"].append(rec.severity_text)
            cols["event_name"].append(rec.event_name)
            cols["body"].append(json_text(plain(rec.body, redactor)) if rec.HasField("body") else None)
            cols["attributes"].append(kv_list_json(rec.attributes, redactor))
            cols["dropped_attributes_count"].append(rec.dropped_attributes_count)
            digest = base.copy()
            digest.update(rec.SerializeToString(deterministic=True))
            cols["content_hash"].append(digest.hexdigest())
        extend_resource_scope(cols, res, sl, redactor, n)
    return one_table_batch("logs", "logs", cols, LOGS_SCHEMA, items, rejected, principal, received_at_us)
