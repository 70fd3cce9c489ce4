"""The calling agent of the A2A scenario, in its own process: an agent (an `invoke_agent trip_planner` span, GenAI
conventions) that delegates three tasks to the remote agent (tests/fidelity3/a2a_server.py) through the `a2a-sdk`
client, in one A2A context (the conversation), with the published A2A instrumentation (splunk-ao-a2a) installed: it
puts the trace context into each message's metadata. Spans go over OTLP/HTTP to the receiver named on the
command line.

``python -m tests.fidelity3.a2a_client AGENT_URL OTLP_URL`` prints the ground truth as one JSON line: the caller's
trace id and, per delegated task, its id, context id and final state as the client received it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

AGENT_NAME = "trip_planner"
REQUESTS = ("Forecast for Paris?", "Book a hotel in Paris", "Plan a trip to Paris")


async def agent(agent_url: str, provider: TracerProvider) -> dict[str, Any]:
    import httpx
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, Task, TextPart

    context_id = "ctx-" + uuid.uuid4().hex[:12]
    truth: dict[str, Any] = {"trace_id": None, "context_id": context_id, "tasks": []}
    tracer = provider.get_tracer("trip-app")
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME}
    async with httpx.AsyncClient(timeout=60) as http:
        client = await ClientFactory.connect(agent_url, client_config=ClientConfig(httpx_client=http, streaming=False))
        with tracer.start_as_current_span(f"invoke_agent {AGENT_NAME}", attributes=attributes) as span:
            truth["trace_id"] = format(span.get_span_context().trace_id, "032x")
            for text in REQUESTS:
                message = Message(
                    role=Role.user,
                    parts=[Part(root=TextPart(text=text))],
                    message_id=uuid.uuid4().hex,
                    context_id=context_id,
                )
                async for event in client.send_message(message):
                    task = event[0] if isinstance(event, tuple) else event
                    assert isinstance(task, Task), task
                    truth["tasks"].append(
                        {"id": task.id, "context_id": task.context_id, "state": task.status.state.value}
                    )
        await client.close()
    return truth


def main() -> None:
    agent_url, url = sys.argv[1], sys.argv[2]
    provider = TracerProvider(resource=Resource.create({"service.name": "a2a-trip-client"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))  # flushed at shutdown
    trace.set_tracer_provider(provider)
    from splunk_ao_a2a import A2AInstrumentor

    A2AInstrumentor().instrument(tracer_provider=provider, agent_name=AGENT_NAME)
    try:
        truth = asyncio.run(agent(agent_url, provider))
    finally:
        provider.shutdown()
    print(json.dumps(truth))


if __name__ == "__main__":
    main()
