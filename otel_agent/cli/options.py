"""Shared click option decorators (one definition per option, reused by every command)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from otel_agent.config import SETTINGS, Setting

F = Callable[..., Any]


def setting_option(s: Setting) -> Callable[[F], F]:
    kwargs: dict[str, Any] = {"envvar": s.env, "show_envvar": True, "help": s.help, "default": None}
    if s.is_flag:
        kwargs.update(is_flag=True, default=None)
    else:
        kwargs["type"] = s.type
        kwargs["help"] = f"{s.help} [default: {s.default}]"
    return click.option(s.flag, s.name, **kwargs)


def receiver_settings(fn: F) -> F:
    """Every receiver setting as an option (flag > OTEL_AGENT_* env var > default)."""
    for s in reversed(SETTINGS):
        fn = setting_option(s)(fn)
    return fn


def db_option(multiple: bool = False) -> Callable[[F], F]:
    return click.option(
        "--db",
        "db",
        envvar="OTEL_AGENT_DB",
        show_envvar=True,
        multiple=multiple,
        default=None,
        help="DuckDB file to read [default: ./otel_agent.duckdb]"
        + ("; repeat to query several shards as one" if multiple else ""),
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
    help="Output format.",
)
