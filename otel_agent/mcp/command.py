"""Command: ``otel-agent mcp`` — the MCP server over stdio, for an agent or assistant that starts it as a
subprocess: over closed store files (``--db``, repeatable: shards; ``--archive``), read-only, or over a running
receiver (``--receiver URL`` with ``--token``; also the receiver holding a single ``--db``), whose query and review
APIs apply their own caps and roles. A receiver also serves the same tools itself, at ``/mcp``.

Nothing but MCP messages is written to standard output; the SDK logs to standard error.
"""

from __future__ import annotations

import click

from otel_agent.options import where_options
from otel_agent.read.stores import Where


@click.command("mcp")
@where_options
@click.option(
    "--timeout-s", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
    help="Time limit of one read over files (a receiver applies its own --query-timeout-s).",
)  # fmt: skip
def mcp_command(where: Where, timeout_s: float) -> None:
    """Serve the store to MCP clients (agents, assistants) over stdio: search runs, a run's errors, cost and
    tree, spans, lineage, receipts, health, sessions, the views' schema, read-only SQL; with a receiver and a
    token holding the review role, approve / reject / annotate."""
    from dataclasses import replace

    from otel_agent.mcp.backends import Backend, FilesBackend, RemoteBackend
    from otel_agent.mcp.server import build_server
    from otel_agent.read.stores import receiver_of

    where = replace(where, timeout_s=timeout_s)
    url = receiver_of(where)
    backend: Backend = RemoteBackend(replace(where, receiver=url)) if url else FilesBackend(where)
    try:
        build_server(backend).run("stdio")
    finally:
        backend.close()


COMMANDS: list[click.Command] = [mcp_command]
