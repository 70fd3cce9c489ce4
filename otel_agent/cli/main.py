"""The CLI's commands and the ``otel-agent`` group they hang in (``otel_agent.main`` adds the other faces'
commands: ``serve``, ``ui``, ``mcp``, ``demo``, ``export``).

Command bodies import what they need when they run: the decode worker processes re-import this module
(multiprocessing's spawn runs the parent's ``__main__``), and they should not carry DuckDB, HTTP clients
or anything else a decoder does not use.

Every failure a person can cause is answered in one line on stderr with exit code 2, never a traceback:
usage errors (click's), any ``OtelAgentError`` (a setting, a store file, a receiver's answer), and an
``OSError`` (a file that cannot be read or written). See ``OtelAgentGroup``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from otel_agent import __version__
from otel_agent.errors import OtelAgentError
from otel_agent.options import columns_option, format_option, max_rows_option, where_options, wide_option
from otel_agent.read.stores import Where

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
@click.argument("query")
@where_options
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
def sql(query: str, where: Where, fmt: str, max_rows: int, timeout_s: float) -> None:
    """Run one read-only SQL statement against a store (or a live receiver, or several shards)."""
    from dataclasses import replace

    from otel_agent.cli.render import emit
    from otel_agent.read.query import sandboxed
    from otel_agent.read.stores import open_source

    with open_source(replace(where, timeout_s=timeout_s)) as src:
        result = sandboxed(src, query, max_rows=max_rows, max_bytes=None, timeout_s=timeout_s)
    emit(result, fmt)


def _register_commands() -> None:
    from otel_agent.cli import alert_cmds, decision_cmds, evidence_cmds, list_cmds, manifest_cmds, runs_cmds

    for module in (runs_cmds, list_cmds, evidence_cmds, decision_cmds, manifest_cmds, alert_cmds):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()
