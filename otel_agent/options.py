"""Shared click option decorators of every ``otel-agent`` command, whichever face defines it (the CLI's reading
commands, ``ui``, ``mcp``, ``export``, ``demo``): one definition per option. Where a command reads is one
argument, ``where`` (``read.stores.Where``: files, shards, archive, receiver, token), never a context variable."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from otel_agent.config import DEFAULT_DB, SETTINGS, Setting
from otel_agent.read.stores import Where

F = Callable[..., Any]

# Settings whose value is a file: click checks the path (a directory is refused with a clear message).
_FILE_SETTINGS = {"db": click.Path(dir_okay=False), "tokens_file": click.Path(exists=True, dir_okay=False),
                  "redaction_rules": click.Path(exists=True, dir_okay=False)}  # fmt: skip


def setting_option(s: Setting) -> Callable[[F], F]:
    kwargs: dict[str, Any] = {"envvar": s.env, "show_envvar": True, "help": s.help, "default": None}
    if s.is_flag:
        kwargs.update(is_flag=True, default=None)
    else:
        kwargs["type"] = _FILE_SETTINGS.get(s.name) or (click.Choice(s.choices) if s.choices else s.type)
        kwargs["help"] = f"{s.help} [default: {s.default}]"
    return click.option(s.flag, s.name, **kwargs)


def receiver_settings(fn: F) -> F:
    """Every receiver setting as an option (flag > OTEL_AGENT_* env var > default)."""
    for s in reversed(SETTINGS):
        fn = setting_option(s)(fn)
    return fn


def db_option(multiple: bool = False, writes: bool = False) -> Callable[[F], F]:
    if writes:
        text = (
            f"DuckDB file to write into [default: {DEFAULT_DB}]; when a receiver holds it, the write goes "
            "through that receiver"
        )
    else:
        text = f"DuckDB file to read [default: {DEFAULT_DB}]" + (
            "; repeat to query several shards as one" if multiple else ""
        )
    return click.option(
        "--db",
        "db",
        envvar="OTEL_AGENT_DB",
        show_envvar=True,
        multiple=multiple,
        default=None,
        type=click.Path(dir_okay=False),
        help=text,
    )


receiver_option = click.option(
    "--receiver",
    envvar="OTEL_AGENT_RECEIVER",
    show_envvar=True,
    default=None,
    help="HTTP address of a running receiver to query (found automatically for --db when it holds the file).",
)

token_option = click.option(
    "--token",
    envvar="OTEL_AGENT_TOKEN",
    show_envvar=True,
    default=None,
    help="Bearer token for a receiver that requires authentication.",
)

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format (table cuts long text with …; csv and json never cut).",
)

max_rows_option = click.option(
    "--max-rows",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Row cap (the output says when it was reached).",
)


archive_option = click.option(
    "--archive",
    envvar="OTEL_AGENT_ARCHIVE",
    show_envvar=True,
    default=None,
    help="Parquet archive (directory, relative to the working directory or absolute, or s3:// URI) to read with "
    "the store(s): raw tables become live ∪ archive.",
)


def _remember(key: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def store(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        ctx.meta[key] = value

    return store


def _column_names(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    names = [n.strip() for n in (value or "").split(",") if n.strip()]
    if value is not None and not names:
        raise click.BadParameter("name at least one column (a,b,c)")
    ctx.meta["otel_agent.columns"] = names or None


wide_option = click.option(
    "--wide",
    is_flag=True,
    default=False,
    expose_value=False,
    callback=_remember("otel_agent.wide"),
    help="table: every column, however wide (by default a table fits the terminal and names what it leaves out).",
)

columns_option = click.option(
    "--columns",
    default=None,
    metavar="A,B,…",
    expose_value=False,
    callback=_column_names,
    help="Only these columns, in this order (any format).",
)


def limit_option(default: int, what: str) -> Callable[[F], F]:
    return click.option(
        "--limit", type=click.IntRange(min=1), default=default, show_default=True, help=f"How many {what}."
    )


def where_options(fn: F) -> F:
    """--db (repeatable), --receiver, --token and --archive, handed to the command as one ``where`` argument."""

    @functools.wraps(fn)
    def command(
        *args: Any, db: tuple[str, ...], receiver: str | None, token: str | None, archive: str | None, **kwargs: Any
    ) -> Any:
        return fn(*args, where=Where(tuple(db or ()), receiver, token, archive), **kwargs)

    for option in reversed((db_option(multiple=True), receiver_option, token_option, archive_option)):
        command = option(command)
    return command  # type: ignore[return-value]


def reading_options(fn: F) -> F:
    """What every reading command takes: ``where`` (--db, --receiver, --token, --archive), --format, --wide,
    --columns, --max-rows."""
    for option in reversed((format_option, wide_option, columns_option, max_rows_option)):
        fn = option(fn)
    return where_options(fn)


# A UTC time on the command line (--at, --since, --until): ISO 8601 without a zone, or with a trailing Z.
UTC_TIME = click.DateTime(
    [f"%Y-%m-%d{sep}%H:%M:%S{frac}{z}" for sep in ("T", " ") for frac in ("", ".%f") for z in ("", "Z")] + ["%Y-%m-%d"]
)
