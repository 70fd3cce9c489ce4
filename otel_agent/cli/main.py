"""The ``otel-agent`` command.

Command bodies import what they need when they run: the decode worker processes re-import this module
(multiprocessing's spawn runs the parent's ``__main__``), and they should not carry DuckDB, HTTP clients
or anything else a decoder does not use.

Every failure a person can cause is answered in one line on stderr with exit code 2, never a traceback:
usage errors (click's), any ``OtelAgentError`` (a setting, a store file, a receiver's answer), and an
``OSError`` (a file that cannot be read or written). See ``OtelAgentGroup``.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any

import click

from otel_agent import __version__
from otel_agent.cli.options import (
    archive_option,
    columns_option,
    db_option,
    format_option,
    max_rows_option,
    receiver_option,
    receiver_settings,
    token_option,
    wide_option,
)
from otel_agent.config import DEFAULT_DB, ReceiverConfig
from otel_agent.errors import OtelAgentError

EXIT_FAILURE = 2
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


def one_line(text: str) -> str:
    return " ".join(str(text).split())


class CommandFailed(click.ClickException):
    """What an OtelAgentError or OSError becomes at the command line: one line, exit code 2."""

    exit_code = EXIT_FAILURE


def _is_duckdb_error(exc: BaseException) -> bool:
    # checked by module so this module does not import DuckDB (see the module docstring)
    return type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb")


def explain(exc: OtelAgentError) -> str:
    """The one line an OtelAgentError becomes: its message, or, where a person needs the next step (a
    receiver that does not answer, a store file that is not where the command looked), what to try."""
    from otel_agent.query.api_client import ReceiverUnreachableError
    from otel_agent.query.client import StoreNotFoundError

    if isinstance(exc, ReceiverUnreachableError):
        url = str(exc).split(" ")[1] if str(exc).startswith("receiver ") else "the receiver"
        cause = exc.__cause__
        name = type(cause).__name__ if cause is not None else ""
        if "Timeout" in name:
            what = "did not answer in time"
        elif "ConnectionError" in name or "ConnectTimeout" in name:
            what = "cannot be reached (connection refused or no route)"
        else:
            what = f"did not answer ({name or 'no reply'})"
        return (
            f"receiver {url} {what}: is 'otel-agent serve' running there? --receiver takes its HTTP address "
            "(HOST:PORT, default port 4318); without --receiver the command reads the file given by --db"
        )
    text = one_line(str(exc))
    if isinstance(exc, StoreNotFoundError) and text.startswith("no DuckDB file at "):
        return (
            f"{text}: give the store with --db PATH (or OTEL_AGENT_DB=PATH), or a running receiver's address "
            "with --receiver HOST:PORT"
        )
    return text


class OtelAgentGroup(click.Group):
    """The root group: turns our errors into one-line answers, and prints click's usage errors on one line
    (with where to find help) instead of click's usage block."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OtelAgentError as exc:
            raise CommandFailed(explain(exc)) from exc
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):
                raise
            raise CommandFailed(one_line(str(exc))) from exc
        except Exception as exc:
            if _is_duckdb_error(exc):
                raise CommandFailed(one_line(str(exc))) from exc
            raise

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            if isinstance(exc, _NO_ARGS_IS_HELP):  # a bare `otel-agent` or `otel-agent review`: the help
                exc.show()
                sys.exit(exc.exit_code)
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {one_line(exc.format_message())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def version_text() -> str:
    """``otel-agent --version``: the version, and which traces fold a receiver started now would use."""
    from otel_agent.fold import native

    if native.enabled():
        fold = "native (Rust) traces fold in use"
    elif native.available():
        fold = f"Python traces fold in use (the native one is built, switched off by {native.NATIVE_FOLD_ENV})"
    else:
        fold = "Python traces fold in use (the native one was not built: no Rust toolchain at install time)"
    return f"otel-agent {__version__}, Python {sys.version.split()[0]}, {fold}"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit()


@click.group(cls=OtelAgentGroup)
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Show the version, and whether the native (Rust) traces fold is in use, and exit.",
)  # fmt: skip
def cli() -> None:
    """OpenTelemetry-native observability for LLM agents, stored in DuckDB."""


@cli.command()
@receiver_settings
def serve(**settings: Any) -> None:
    """Run the OTLP receiver (gRPC and HTTP) writing into a DuckDB file."""
    # A stop asked for while the receiver is still starting is kept, and honoured once it has started: Ctrl-C,
    # SIGTERM to this process or to its process group (`timeout`, systemd) all end in the same clean stop.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    from otel_agent.server.receiver import Receiver

    config = ReceiverConfig.resolve(**settings)
    refuse_missing_directory(config.db)
    logging.basicConfig(level=config.log_level.upper(), format=LOG_FORMAT)
    receiver = Receiver(config).start()
    click.echo(
        f"otel-agent {__version__} receiving OTLP on grpc://{receiver.grpc_address} and {receiver.http_address} "
        f"into {config.db}; console {receiver.console_url}  (Ctrl-C to stop)",
        err=True,
    )
    while not stop.wait(1.0):
        pass
    click.echo("stopping: committing accepted data…", err=True)
    receiver.stop()
    click.echo(f"stopped; {receiver.writer.stats.items} items committed this run", err=True)


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def refuse_missing_directory(db: str) -> None:
    """A store path in a directory that does not exist is a mistake (a typo, an unmounted volume): refused,
    never created."""
    from pathlib import Path

    parent = Path(db).expanduser().parent
    if not parent.is_dir():
        raise CommandFailed(f"--db {db}: the directory {parent} does not exist (create it first, or fix the path)")


@cli.command()
@click.argument("query")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
@wide_option
@columns_option
@max_rows_option
@click.option(
    "--timeout-s",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Time limit of a query run on files (a receiver applies its own --query-timeout-s).",
)
@archive_option
def sql(
    query: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int, timeout_s: float
) -> None:
    """Run one read-only SQL statement against a store (or a live receiver, or several shards)."""
    from otel_agent.cli.render import emit
    from otel_agent.query.client import run_sql

    result = run_sql(
        query, list(db) or [DEFAULT_DB], receiver=receiver, token=token, max_rows=max_rows, timeout_s=timeout_s
    )
    emit(result, fmt)


def main() -> None:  # pragma: no cover - console entry point convenience
    sys.exit(cli())


def _register_commands() -> None:
    from otel_agent.cli import decision_cmds, demo_cmds, evidence_cmds, list_cmds, manifest_cmds, runs_cmds, ui_cmds

    for module in (demo_cmds, runs_cmds, list_cmds, evidence_cmds, decision_cmds, manifest_cmds, ui_cmds):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
