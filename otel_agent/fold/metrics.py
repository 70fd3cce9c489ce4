"""ExportMetricsServiceRequest → ``metric_points`` Arrow table (gauge, sum, histogram, exponential
histogram, summary: one row per data point)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from otel_agent.fold.batch import (
    BEYOND_TIMESTAMPS,
    INGEST_FIELDS,
    RESOURCE_SCOPE_FIELDS,
    TIMESTAMP_LIMIT,
    FoldedBatch,
    Rejections,
    quoted,
)
from otel_agent.fold.common import (
    extend_resource_scope,
    json_text,
    kv_list_dict,
    kv_list_json,
    one_table_batch,
    scope_groups,
)
from otel_agent.fold.redact import Redactor

TEMPORALITY = ("UNSPECIFIED", "DELTA", "CUMULATIVE")

METRIC_POINTS_SCHEMA = pa.schema(
    [
        pa.field("metric_name", pa.string()),
        pa.field("description", pa.string()),
        pa.field("unit", pa.string()),
        pa.field("metric_metadata", pa.string()),
        pa.field("type", pa.string()),
        pa.field("temporality", pa.string()),
        pa.field("is_monotonic", pa.bool_()),
        pa.field("start_time", pa.timestamp("ns")),
        pa.field("time", pa.timestamp("ns")),
        pa.field("value_double", pa.float64()),
        pa.field("value_int", pa.int64()),
        pa.field("count", pa.uint64()),
        pa.field("sum", pa.float64()),
        pa.field("min", pa.float64()),
        pa.field("max", pa.float64()),
        pa.field("bucket_counts", pa.list_(pa.uint64())),
        pa.field("explicit_bounds", pa.list_(pa.float64())),
        pa.field("exp_scale", pa.int32()),
        pa.field("exp_zero_count", pa.uint64()),
        pa.field("exp_zero_threshold", pa.float64()),
        pa.field("exp_positive_offset", pa.int32()),
        pa.field("exp_positive_bucket_counts", pa.list_(pa.uint64())),
        pa.field("exp_negative_offset", pa.int32()),
        pa.field("exp_negative_bucket_counts", pa.list_(pa.uint64())),
        pa.field(
            "quantile_values",
            pa.list_(pa.struct([pa.field("quantile", pa.float64()), pa.field("value", pa.float64())])),
        ),
        pa.field("exemplars", pa.string()),
        pa.field("flags", pa.uint32()),
        pa.field("attributes", pa.string()),
        *RESOURCE_SCOPE_FIELDS,
        pa.field("content_hash", pa.string()),
        *INGEST_FIELDS,
    ]
)

_POINT_ONLY = [
    "value_double",
    "value_int",
    "count",
    "sum",
    "min",
    "max",
    "bucket_counts",
    "explicit_bounds",
    "exp_scale",
    "exp_zero_count",
    "exp_zero_threshold",
    "exp_positive_offset",
    "exp_positive_bucket_counts",
    "exp_negative_offset",
    "exp_negative_bucket_counts",
    "quantile_values",
    "exemplars",
]


def _exemplars(point: Any, redactor: Redactor) -> str | None:
    if not len(point.exemplars):
        return None
    out = []
    for ex in point.exemplars:
        which = ex.WhichOneof("value")
        out.append(
            {
                "time_unix_nano": ex.time_unix_nano,
                "value": getattr(ex, which) if which else None,
                "trace_id": ex.trace_id.hex() or None,
                "span_id": ex.span_id.hex() or None,
                "filtered_attributes": kv_list_dict(ex.filtered_attributes, redactor),
            }
        )
    return json_text(out)


def _histogram_stats(p: Any) -> dict[str, Any]:
    """count, sum, min and max of a histogram or exponential histogram point (sum, min and max are optional)."""
    return {
        "count": p.count,
        "sum": p.sum if p.HasField("sum") else None,
        "min": p.min if p.HasField("min") else None,
        "max": p.max if p.HasField("max") else None,
    }


def _point_values(mtype: str, p: Any, redactor: Redactor) -> dict[str, Any]:
    v: dict[str, Any] = {"exemplars": _exemplars(p, redactor) if mtype != "summary" else None}
    if mtype in ("gauge", "sum"):
        which = p.WhichOneof("value")
        v["value_double"] = p.as_double if which == "as_double" else None
        v["value_int"] = p.as_int if which == "as_int" else None
    elif mtype == "histogram":
        v.update(
            _histogram_stats(p),
            bucket_counts=list(p.bucket_counts),
            explicit_bounds=list(p.explicit_bounds),
        )
    elif mtype == "exponential_histogram":
        v.update(
            _histogram_stats(p),
            exp_scale=p.scale,
            exp_zero_count=p.zero_count,
            exp_zero_threshold=p.zero_threshold,
            exp_positive_offset=p.positive.offset,
            exp_positive_bucket_counts=list(p.positive.bucket_counts),
            exp_negative_offset=p.negative.offset,
            exp_negative_bucket_counts=list(p.negative.bucket_counts),
        )
    elif mtype == "summary":
        v.update(
            count=p.count,
            sum=p.sum,
            quantile_values=[{"quantile": q.quantile, "value": q.value} for q in p.quantile_values],
        )
    return v


def fold_metrics(
    request: ExportMetricsServiceRequest, redactor: Redactor, principal: str | None, received_at_us: int
) -> FoldedBatch:
    cols: dict[str, list] = {name: [] for name in METRIC_POINTS_SCHEMA.names}
    items = 0
    rejected = Rejections("data point")
    for res, sm, base in scope_groups(request.resource_metrics, "scope_metrics", redactor):
        n = 0
        for metric in sm.metrics:
            mtype = metric.WhichOneof("data")
            if mtype is None:
                continue
            data = getattr(metric, mtype)
            temporality = getattr(data, "aggregation_temporality", None)
            if temporality is not None and not 0 <= temporality < len(TEMPORALITY):
                # an open enum on the wire: refused, never read as another value (-1 was CUMULATIVE)
                points = len(data.data_points)
                items += points
                rejected.add(
                    f"metric {quoted(metric.name)}: aggregation temporality {temporality} is not "
                    "0 (unspecified), 1 (delta) or 2 (cumulative)",
                    points,
                )
                continue
            monotonic = data.is_monotonic if mtype == "sum" else None
            metadata = kv_list_json(metric.metadata, redactor) if len(metric.metadata) else None
            head = metric.name.encode() + b"\0" + metric.unit.encode() + b"\0" + mtype.encode()
            for p in data.data_points:
                items += 1
                start, time = p.start_time_unix_nano, p.time_unix_nano
                if (start | time) >= TIMESTAMP_LIMIT:
                    rejected.add(f"metric {quoted(metric.name)}, data point {items - 1}: {BEYOND_TIMESTAMPS}")
                    continue
                n += 1
                cols["metric_name"].append(metric.name)
                cols["description"].append(metric.description)
                cols["unit"].append(metric.unit)
                cols["metric_metadata"].append(metadata)
                cols["type"].append(mtype)
                cols["temporality"].append(None if temporality is None else TEMPORALITY[temporality])
                cols["is_monotonic"].append(monotonic)
                cols["start_time"].append(start)
                cols["time"].append(time)
                values = _point_values(mtype, p, redactor)
                for name in _POINT_ONLY:
                    cols[name].append(values.get(name))
                cols["flags"].append(p.flags)
                cols["attributes"].append(kv_list_json(p.attributes, redactor))
                digest = base.copy()
                digest.update(head)
                digest.update(p.SerializeToString(deterministic=True))
                cols["content_hash"].append(digest.hexdigest())
        extend_resource_scope(cols, res, sm, redactor, n)
    return one_table_batch(
        "metrics", "metric_points", cols, METRIC_POINTS_SCHEMA, items, rejected, principal, received_at_us
    )
