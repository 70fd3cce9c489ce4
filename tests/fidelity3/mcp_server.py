"""An MCP server (the official `mcp` SDK's MCPServer, stdio transport) in its own process, traced by the SDK's own
OpenTelemetry middleware (server spans `tools/call X`, context extracted from the request's `_meta`) and exported
over OTLP/HTTP to the receiver named on the command line: ``python -m tests.fidelity3.mcp_server URL``."""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-weather-server"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[1])))
    trace.set_tracer_provider(provider)

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("weather")

    @server.tool()
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @server.tool()
    def get_forecast(city: str) -> str:
        """Fails on purpose."""
        raise ValueError(f"no forecast for {city}")

    try:
        server.run("stdio")
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
