"""The remote agent of the A2A scenario, in its own process: an `a2a-sdk` JSON-RPC server (Starlette app under
uvicorn, loopback) whose agent executor answers by the request's text — a forecast it completes (working, an
artifact, completed), a booking it cannot make (failed), and a trip that needs the user's dates
(input-required). Tracing: a2a-sdk's own spans and the published A2A instrumentation (splunk-ao-a2a's
A2AInstrumentor, which reads the caller's trace context from the message metadata), exported over OTLP/HTTP to
the receiver named on the command line.

``python -m tests.fidelity3.a2a_server PORT OTLP_URL``; prints ``ready`` once it listens; SIGTERM stops it and
flushes its spans.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

AGENT_NAME = "travel_agent"


def app(port: int) -> Any:
    """The remote agent's Starlette app (a2a-sdk's JSON-RPC routes and agent card)."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.apps import A2AStarletteApplication
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
    from a2a.utils import new_agent_text_message, new_task

    class TravelExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            task = context.current_task or new_task(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            text = context.get_user_input().lower()
            await updater.start_work(new_agent_text_message("looking", task.context_id, task.id))
            if "forecast" in text:
                await updater.add_artifact([Part(root=TextPart(text="sunny in Paris"))], name="forecast")
                await updater.complete()
            elif "book" in text:
                await updater.failed(new_agent_text_message("no rooms left", task.context_id, task.id))
            else:
                await updater.requires_input(new_agent_text_message("which dates?", task.context_id, task.id))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    card = AgentCard(
        name=AGENT_NAME,
        description="Plans trips",
        url=f"http://127.0.0.1:{port}/",
        version="1.0.0",
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="trips", name="trips", description="Plans trips", tags=["travel"])],
    )
    handler = DefaultRequestHandler(agent_executor=TravelExecutor(), task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


async def serve(port: int) -> None:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app(port), host="127.0.0.1", port=port, log_level="warning"))
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: setattr(server, "should_exit", True))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print("ready", flush=True)
    await task


def main() -> None:
    port, url = int(sys.argv[1]), sys.argv[2]
    provider = TracerProvider(resource=Resource.create({"service.name": "a2a-travel-server"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))  # flushed at shutdown
    trace.set_tracer_provider(provider)  # a2a-sdk's own spans use the global provider
    from splunk_ao_a2a import A2AInstrumentor

    A2AInstrumentor().instrument(tracer_provider=provider, agent_name=AGENT_NAME)
    try:
        asyncio.run(serve(port))
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
