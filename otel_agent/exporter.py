"""``DuckDBSpanExporter``: an OpenTelemetry SDK span exporter that writes straight into an otel_agent store,
for agents that want no server.

It goes through the receiver's own code: the SDK's OTLP encoder builds the ExportTraceServiceRequest bytes
that would have gone on the wire, ``decode_payload`` folds them into the same Arrow tables, and the same
``Writer`` commits them with the same dedupe. One implementation of "OTLP into tables".

It keeps the ``SpanExporter`` contract: ``export`` returns ``SUCCESS`` only after the commit and reports any
failure to store (a full disk, a store that went away) as ``FAILURE`` with one log line, never as an exception
into the SDK's span processor and the agent behind it. ``shutdown`` commits what is queued, folds it into the
maintained derived state (store/maintained.py: no thread runs in the agent's process meanwhile, so until then the
runs view of the file computes from raw) and checkpoints, as the receiver does on stop; a checkpoint that fails
is logged, and the committed data stays in the write-ahead log, which DuckDB replays the next time the file is
opened.
"""

from __future__ import annotations

import logging
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
from otel_agent.store.maintained import DerivedState

log = logging.getLogger(__name__)


class DuckDBSpanExporter(SpanExporter):
    """Export spans into the DuckDB file at ``path``; ``export`` returns after the commit.

    Opening the store happens here, at set-up, so a path that cannot be opened (e.g. held by a receiver)
    raises before any span exists; from then on nothing raises into the SDK.
    """

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
        self._derived = DerivedState(self._con)
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Commit ``spans``; ``FAILURE`` (logged) when they could not be stored or the exporter is shut down."""
        if self._closed:
            log.warning("DuckDBSpanExporter(%s) is shut down: %d spans not exported", self.path, len(spans))
            return SpanExportResult.FAILURE
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            payload = encode_spans(spans).SerializeToString()
            with self._lock:
                batch = decode_payload(
                    "traces", PROTOBUF, payload, self._redactor, self._principal, time.time_ns() // 1000
                )
            self._writer.write(batch)
        except Exception as exc:  # the SpanExporter contract: report the failure, never raise into the SDK
            log.error("DuckDBSpanExporter(%s) could not store %d spans: %s", self.path, len(spans), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True  # export() returns only after its commit: nothing is ever buffered here

    def shutdown(self) -> None:
        """Commit what is queued, checkpoint, close the store; failures are logged, not raised."""
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.close()
        except Exception as exc:
            log.error("DuckDBSpanExporter(%s): stopping the writer failed: %s", self.path, exc)
        try:
            self._derived.catch_up()
        except Exception as exc:  # the runs view keeps computing from raw: correct, only slower
            log.error("DuckDBSpanExporter(%s): folding the maintained state failed: %s", self.path, exc)
        try:
            self._con.execute("CHECKPOINT")
        except Exception as exc:
            log.error(
                "DuckDBSpanExporter(%s): checkpoint at shutdown failed (%s); the committed spans stay in the "
                "write-ahead log and are replayed when the file is next opened",
                self.path,
                exc,
            )
        try:
            self._con.close()
        except Exception as exc:
            log.error("DuckDBSpanExporter(%s): closing the store failed: %s", self.path, exc)
