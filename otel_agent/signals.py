"""What a signal is, in one place: one frozen ``Signal`` per OTLP signal, read by every layer.

The transports take the HTTP path, the gRPC service and the response class from here; the decoder the
message to parse and the fold; the writer the Arrow tables, the re-delivery key and the names of the SQL
statements that store them. Adding a signal (or a table to one) is an edit of this file and its SQL, not a
search through the transports, the decoder and the writer. The Collector keeps one ``internal/<signal>``
package per signal for the same reason.

This module imports no grpc: the decode worker processes import it and stay small (the gRPC service name
comes from the generated protobuf descriptor).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pyarrow as pa
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from otel_agent.fold.batch import FoldedBatch
from otel_agent.fold.documents import PARSED_DOCUMENTS_SCHEMA
from otel_agent.fold.lineage import LINEAGE_KEYS_SCHEMA
from otel_agent.fold.logs import LOGS_SCHEMA, fold_logs
from otel_agent.fold.metrics import METRIC_POINTS_SCHEMA, fold_metrics
from otel_agent.fold.redact import Redactor
from otel_agent.fold.shadow import ShadowTraceRequest
from otel_agent.fold.traces import SPAN_EVENTS_SCHEMA, SPAN_LINKS_SCHEMA, SPANS_SCHEMA, fold_traces

Fold = Callable[[Any, Redactor, str | None, int], FoldedBatch]
"""``fold(request, redactor, principal, received_at_us)`` → the request's rows."""


@dataclass(frozen=True)
class Statements:
    """Names of the statements (``"ingest/<stem>"``: ``store/ingest/<stem>.sql``) that store one table or one
    signal's tables.

    ``duplicates`` counts incoming items already stored (empty for lookup tables, which follow their
    signal's answer); ``insert_all`` is the fast path when nothing is stored or repeated, ``insert_new``
    the re-delivery path, which inserts only what is new."""

    insert_all: str
    insert_new: str
    duplicates: str = ""


@dataclass(frozen=True)
class LookupTable:
    """A table the fold fills beside a signal's own tables (lineage keys, retrieval documents).

    On the fast path its incoming rows are inserted as they are; on the re-delivery path its SQL rule is
    applied to the rows stored now instead (see ``Writer``)."""

    name: str
    schema: pa.Schema
    statements: Statements


@dataclass(frozen=True)
class Signal:
    name: str
    """``traces``, ``logs`` or ``metrics``: the key everything else is found by (``FoldedBatch.signal``)."""
    http_path: str
    request_class: type[Message]
    response_class: type[Message]
    grpc_service: str
    """Fully-qualified service whose ``Export`` method takes this signal."""
    rejected_field: str
    """The ``partial_success`` field of the response that counts rejected items."""
    parse_class: type[Message]
    """What protobuf bytes are parsed into for ``fold`` (traces: the map-shaped ``ShadowTraceRequest``)."""
    fold: Fold
    tables: Mapping[str, pa.Schema]
    """Incoming Arrow tables by name, the main table (the one ``key`` is about) first."""
    key: tuple[str, ...]
    """The re-delivery key of the main table (see docs/schema.md)."""
    statements: Statements
    lookups: tuple[LookupTable, ...] = ()

    @property
    def main_table(self) -> str:
        return next(iter(self.tables))


def _service(module: Any, name: str) -> str:
    return module.DESCRIPTOR.services_by_name[name].full_name


TRACES = Signal(
    name="traces",
    http_path="/v1/traces",
    request_class=trace_service_pb2.ExportTraceServiceRequest,
    response_class=trace_service_pb2.ExportTraceServiceResponse,
    grpc_service=_service(trace_service_pb2, "TraceService"),
    rejected_field="rejected_spans",
    parse_class=ShadowTraceRequest,
    fold=fold_traces,
    tables=MappingProxyType(
        {"spans": SPANS_SCHEMA, "span_events": SPAN_EVENTS_SCHEMA, "span_links": SPAN_LINKS_SCHEMA}
    ),
    key=("end_time", "trace_id", "span_id"),
    statements=Statements("ingest/spans_insert_all", "ingest/spans_insert_new", "ingest/spans_duplicates"),
    lookups=(
        LookupTable(
            "lineage_keys",
            LINEAGE_KEYS_SCHEMA,
            Statements("ingest/lineage_keys_insert_all", "ingest/lineage_keys_insert_new"),
        ),
        LookupTable(
            "parsed_retrieval_documents",
            PARSED_DOCUMENTS_SCHEMA,
            Statements("ingest/documents_insert_all", "ingest/documents_insert_new"),
        ),
    ),
)

LOGS = Signal(
    name="logs",
    http_path="/v1/logs",
    request_class=logs_service_pb2.ExportLogsServiceRequest,
    response_class=logs_service_pb2.ExportLogsServiceResponse,
    grpc_service=_service(logs_service_pb2, "LogsService"),
    rejected_field="rejected_log_records",
    parse_class=logs_service_pb2.ExportLogsServiceRequest,
    fold=fold_logs,
    tables=MappingProxyType({"logs": LOGS_SCHEMA}),
    key=("time", "content_hash"),
    statements=Statements("ingest/logs_insert_all", "ingest/logs_insert_new", "ingest/logs_duplicates"),
)

METRICS = Signal(
    name="metrics",
    http_path="/v1/metrics",
    request_class=metrics_service_pb2.ExportMetricsServiceRequest,
    response_class=metrics_service_pb2.ExportMetricsServiceResponse,
    grpc_service=_service(metrics_service_pb2, "MetricsService"),
    rejected_field="rejected_data_points",
    parse_class=metrics_service_pb2.ExportMetricsServiceRequest,
    fold=fold_metrics,
    tables=MappingProxyType({"metric_points": METRIC_POINTS_SCHEMA}),
    key=("time", "content_hash"),
    statements=Statements(
        "ingest/metric_points_insert_all", "ingest/metric_points_insert_new", "ingest/metric_points_duplicates"
    ),
)

SIGNALS: Mapping[str, Signal] = MappingProxyType({s.name: s for s in (TRACES, LOGS, METRICS)})
"""Every signal by name, in the order the transports register them."""
