"""The ``otel-agent`` command.

Command bodies import what they need when they run: the decode worker processes re-import this module
(multiprocessing's spawn runs the parent's ``__main__``), and they should not carry DuckDB, HTTP clients
or anything else a decoder does not use.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any

import click

from otel_agent import __version__
from otel_agent.cli.options import db_option, format_option, receiver_option, receiver_settings, token_option
from otel_agent.config import ReceiverConfig
from otel_agent.errors import OtelAgentError

DEFAULT_DB = "./otel_agent.duckdb"


@click.group()
@click.version_option(__version__, prog_name="otel-agent")
def cli() -> None:
    """OpenTelemetry-native observability for LLM agents, stored in DuckDB."""


@cli.command()
@receiver_settings
def serve(**settings: Any) -> None:
    """Run the OTLP receiver (gRPC and HTTP) writing into a DuckDB file."""
    from otel_agent.server.receiver import Receiver

    try:
        config = ReceiverConfig.resolve(**settings)
        logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        receiver = Receiver(config).start()
    except (OtelAgentError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    click.echo(
        f"otel-agent receiving OTLP on grpc://{receiver.grpc_address} and {receiver.http_address} "
        f"into {config.db}  (Ctrl-C to stop)",
        err=True,
    )
    while not stop.wait(1.0):
        pass
    click.echo("stopping: committing accepted data…", err=True)
    receiver.stop()
    click.echo(f"stopped; {receiver.writer.stats.items} items committed this run", err=True)


@cli.command()
@click.argument("query")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
@click.option("--max-rows", type=int, default=10_000, show_default=True, help="Row cap.")
def sql(query: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int) -> None:
    """Run one read-only SQL statement against a store (or a live receiver, or several shards)."""
    from otel_agent.cli.render import render
    from otel_agent.query.client import run_sql

    try:
        result = run_sql(query, list(db) or [DEFAULT_DB], receiver=receiver, token=token, max_rows=max_rows)
    except OtelAgentError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(render(result, fmt))


def main() -> None:  # pragma: no cover - console entry point convenience
    sys.exit(cli())


def _register_commands() -> None:
    from otel_agent.cli import demo_cmds, evidence_cmds, runs_cmds

    for module in (demo_cmds, runs_cmds, evidence_cmds):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
