"""otel_agent: OpenTelemetry-native observability for LLM agents.

An OTLP receiver folds spans, logs and metrics into DuckDB (``otel-agent serve``), SQL derives what an
operator of an agent system needs, and ``DuckDBSpanExporter`` writes the same tables with no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:
    from otel_agent.exporter import DuckDBSpanExporter


def __getattr__(name: str) -> Any:
    # Imported lazily so that instrumented agents importing otel_agent.instrument (opentelemetry-api only)
    # do not pay for DuckDB, pyarrow and the SDK.
    if name == "DuckDBSpanExporter":
        from otel_agent.exporter import DuckDBSpanExporter

        return DuckDBSpanExporter
    raise AttributeError(name)


__all__ = ["DuckDBSpanExporter", "__version__"]
