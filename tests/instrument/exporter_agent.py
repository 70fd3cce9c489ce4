"""An agent process whose embedded exporter runs out of disk (run by test_exporter.py in a subprocess).

    python exporter_agent.py MODE PROCESSOR DIR

MODE ``tmpfs``: DIR is a small tmpfs (mounted by the caller); it fills up for real (ENOSPC) and is remounted
larger at the end. MODE ``fsize``: the process's file-size limit (RLIMIT_FSIZE) is lowered just above the
store's size, so DuckDB's write-ahead log hits EFBIG for real; the limit is raised again at the end.
PROCESSOR is ``simple`` or ``batch`` (the SDK's SimpleSpanProcessor / BatchSpanProcessor).

The agent records 60 spans of 32 KB that do not compress, whatever the exporter reports, then shuts the SDK
down, makes room again and prints JSON: how many spans it finished, each export's result with its span names,
and the span names the store holds when reopened.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import ClassVar

import duckdb
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult

from otel_agent import DuckDBSpanExporter

SPANS = 60


class Recording(DuckDBSpanExporter):
    """The real exporter; also remembers what each export returned (an exception would skip the append)."""

    results: ClassVar[list[tuple[str, list[str]]]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        self.results.append((result.name, [s.name for s in spans]))
        return result


def main() -> None:
    mode, processor, directory = sys.argv[1:4]
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    path = os.path.join(directory, "agent.duckdb")
    exporter = Recording(path)
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    if mode == "fsize":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        biggest = max(os.path.getsize(path), os.path.getsize(path + ".wal"))
        resource.setrlimit(resource.RLIMIT_FSIZE, (biggest + 600_000, limits[1]))
    provider = TracerProvider()
    if processor == "simple":
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=4, schedule_delay_millis=10))
    tracer = provider.get_tracer("agent")
    done = 0
    for i in range(SPANS):
        with tracer.start_as_current_span(f"work {i:02d}") as span:
            span.set_attribute("payload", os.urandom(16_384).hex())
        done += 1
        if processor == "batch" and i % 4 == 3:
            provider.force_flush()
    provider.shutdown()  # flushes the processor, then exporter.shutdown(): commit and checkpoint

    if mode == "fsize":
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
    else:
        subprocess.run(["mount", "-o", "remount,size=256m", directory], check=True)
    con = duckdb.connect(path)
    stored = sorted(name for (name,) in con.execute("SELECT name FROM spans").fetchall())
    con.close()
    print(json.dumps({"done": done, "results": Recording.results, "stored": stored}))


if __name__ == "__main__":
    main()
