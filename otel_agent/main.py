"""The ``otel-agent`` command, assembled: the CLI's commands (``otel_agent.cli``) and each other face's —
``serve`` (the receiver with the console at ``/`` and MCP at ``/mcp``), ``ui`` (the console over closed files),
``mcp`` (MCP over stdio), ``demo``, ``export``. The one module that imports every face, so the faces never import
each other (the layering contract in pyproject.toml, checked by tests/test_layers.py).

Command bodies import what they need when they run: the decode worker processes re-import the parent's
``__main__`` (multiprocessing's spawn), and they should not carry DuckDB, HTTP clients or anything else a
decoder does not use.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import Any

import click

from otel_agent import __version__
from otel_agent.cli.main import cli
from otel_agent.console.command import COMMANDS as CONSOLE_COMMANDS
from otel_agent.demo.command import COMMANDS as DEMO_COMMANDS
from otel_agent.errors import ConfigError
from otel_agent.export.command import COMMANDS as EXPORT_COMMANDS
from otel_agent.mcp.command import COMMANDS as MCP_COMMANDS
from otel_agent.options import receiver_settings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def refuse_missing_directory(db: str) -> None:
    """A store path in a directory that does not exist is a mistake (a typo, an unmounted volume): refused,
    never created."""
    parent = Path(db).expanduser().parent
    if not parent.is_dir():
        raise ConfigError(f"--db {db}: the directory {parent} does not exist (create it first, or fix the path)")


def serving(config: Any) -> Any:
    """A receiver over ``config`` serving the web console at ``/`` and MCP at ``/mcp`` beside OTLP and the
    APIs (not started)."""
    from otel_agent.console.app import receiver_console
    from otel_agent.mcp.http import receiver_mcp
    from otel_agent.server.receiver import Receiver

    return Receiver(config, faces=(receiver_mcp, receiver_console))


@cli.command()
@receiver_settings
def serve(**settings: Any) -> None:
    """Run the OTLP receiver (gRPC and HTTP) writing into a DuckDB file."""
    # A stop asked for while the receiver is still starting is kept, and honoured once it has started: Ctrl-C,
    # SIGTERM to this process or to its process group (`timeout`, systemd) all end in the same clean stop.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    from otel_agent.config import ReceiverConfig

    config = ReceiverConfig.resolve(**settings)
    refuse_missing_directory(config.db)
    logging.basicConfig(level=config.log_level.upper(), format=LOG_FORMAT)
    receiver = serving(config).start()
    click.echo(
        f"otel-agent {__version__} receiving OTLP on grpc://{receiver.grpc_address} and {receiver.http_address} "
        f"into {config.db}; console {receiver.console_url}, MCP {receiver.http_address}/mcp  (Ctrl-C to stop)",
        err=True,
    )
    while not stop.wait(1.0):
        pass
    click.echo("stopping: committing accepted data…", err=True)
    receiver.stop()
    click.echo(f"stopped; {receiver.writer.stats.items} items committed this run", err=True)


for _command in (*DEMO_COMMANDS, *CONSOLE_COMMANDS, *MCP_COMMANDS, *EXPORT_COMMANDS):
    cli.add_command(_command)

__all__ = ["cli", "serving"]
