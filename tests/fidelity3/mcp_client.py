"""The MCP client side of the MCP scenario, in its own process (a process-wide tracer provider is what the `mcp`
SDK's tracing uses): an agent (an `invoke_agent` span, GenAI conventions) that calls two tools of the MCP server
(tests/fidelity3/mcp_server.py, spawned over stdio) through the official SDK's ClientSession, with the published
OpenInference MCP instrumentation installed. Spans go over OTLP/HTTP to the receiver named on the command line.

``python -m tests.fidelity3.mcp_client URL`` prints the ground truth as one JSON line: the tool calls made and
which ones the server answered with an error.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


async def agent(url: str, provider: TracerProvider) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.fidelity3.mcp_server", url],
        cwd=root,
        env={"PYTHONPATH": root},
    )
    truth: dict[str, Any] = {"tool_calls": [], "trace_id": None}
    tracer = provider.get_tracer("weather-app")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}
        with tracer.start_as_current_span("invoke_agent weather_agent", attributes=attributes) as span:
            truth["trace_id"] = format(span.get_span_context().trace_id, "032x")
            for name in ("get_weather", "get_forecast"):
                result = await session.call_tool(name, {"city": "Paris"})
                truth["tool_calls"].append({"name": name, "is_error": bool(result.is_error)})
    return truth


def main() -> None:
    url = sys.argv[1]
    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-weather-client"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
    try:
        truth = asyncio.run(agent(url, provider))
    finally:
        provider.shutdown()
    print(json.dumps(truth))


if __name__ == "__main__":
    main()
