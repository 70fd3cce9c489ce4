"""``DuckDBSpanExporter``: an OpenTelemetry SDK span exporter that writes straight into an otel_agent store,
for agents that want no server.

It goes through the receiver's own code: the SDK's OTLP encoder builds the ExportTraceServiceRequest bytes
that would have gone on the wire, ``decode_payload`` folds them into the same Arrow tables, and the same
``Writer`` commits them with the same dedupe. One implementation of "OTLP into tables".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_agent.config import DEFAULT_DB
from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor, load_rules
from otel_agent.ingest.writer import Writer
from otel_agent.store.database import open_store


class DuckDBSpanExporter(SpanExporter):
    """Export spans into the DuckDB file at ``path``; ``export`` returns after the commit."""

    def __init__(
        self,
        path: str | Path = DEFAULT_DB,
        *,
        redaction_rules: str | Path | None = None,
        default_redaction: bool = True,
        principal: str | None = None,
    ) -> None:
        self.path = str(path)
        self._redactor = Redactor(load_rules(redaction_rules, use_defaults=default_redaction))
        self._principal = principal
        self._con = open_store(self.path)
        self._writer = Writer(self._con, max_inflight_bytes=1 << 62)
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._closed:
            return SpanExportResult.FAILURE
        if not spans:
            return SpanExportResult.SUCCESS
        payload = encode_spans(spans).SerializeToString()
        with self._lock:
            batch = decode_payload("traces", PROTOBUF, payload, self._redactor, self._principal, time.time_ns() // 1000)
        self._writer.write(batch)
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        self._con.close()
