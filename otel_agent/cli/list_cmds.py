"""Listing commands over the public views: claims, artifacts, cost, health. Each reads the read layer
(``read.evidence``, ``read.artifacts``, ``read.runs``, ``read.health``: documented views of
docs/views-evidence.md and docs/views-runs.md) and takes what every reading command takes (``--db``,
``--receiver``, ``--token``, ``--archive``, ``--format``, ``--max-rows``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from otel_agent.options import UTC_TIME, limit_option, reading_options
from otel_agent.read.evidence import CLAIM_STATUSES
from otel_agent.read.health import TABLES as HEALTH_TABLES
from otel_agent.read.stores import Where


def show(
    where: Where, fmt: str, read: Callable[[Any], Any], run_id: str | None = None, artifact_id: str | None = None
) -> None:
    """Print what ``read(source)`` returns. An unknown ``run_id`` or ``artifact_id`` (what the rows were
    filtered by) is a mistake — one line, exit 2 — not an empty table; whether it exists is asked only when
    nothing matched."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.read.artifacts import artifact_exists
    from otel_agent.read.runs import run_exists
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        result = read(src)
        if not result.rows and run_id is not None and not run_exists(src, run_id):
            raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
        if not result.rows and artifact_id is not None and not artifact_exists(src, artifact_id):
            raise NotFoundError(f"no artifact {artifact_id!r} (list them with: otel-agent artifacts)")
    emit(result, fmt)


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat(sep=" ")


run_filter = click.option("--run", "run_id", default=None, help="Only this run.")


@click.command()
@reading_options
@run_filter
@click.option("--status", type=click.Choice(CLAIM_STATUSES), default=None, help="Only claims in this state.")
@limit_option(100, "claims")
def claims(where: Where, fmt: str, max_rows: int, run_id: str | None, status: str | None, limit: int) -> None:
    """Claims with their support status (supported, unverified, rejected, conflicted) and why, from
    claim_support. Follow one with: otel-agent lineage CLAIM_ID."""
    from otel_agent.read.evidence import claims_table

    show(where, fmt, lambda src: claims_table(src, run_id, status, limit, max_rows), run_id=run_id)


@click.command()
@reading_options
@run_filter
@limit_option(100, "artifacts (latest version first)")
def artifacts(where: Where, fmt: str, max_rows: int, run_id: str | None, limit: int) -> None:
    """Artifacts with their versions and review status, from the artifacts view. Print one with:
    otel-agent export report ARTIFACT_ID."""
    from otel_agent.read.artifacts import artifacts_table

    show(where, fmt, lambda src: artifacts_table(src, run_id, limit, max_rows), run_id=run_id)


@click.command()
@reading_options
@run_filter
@limit_option(100, "rows (most expensive first)")
def cost(where: Where, fmt: str, max_rows: int, run_id: str | None, limit: int) -> None:
    """Where the money went: cost per run, step, skill, provider/model and tool, from cost_breakdown."""
    from otel_agent.read.runs import cost_table

    show(where, fmt, lambda src: cost_table(src, run_id, limit, max_rows), run_id=run_id)


@click.command()
@reading_options
@click.option(
    "--of", "what", type=click.Choice(sorted(HEALTH_TABLES)), default="providers", show_default=True, help="Which."
)
@click.option("--since", type=UTC_TIME, default=None, help="Only spans that started at or after this UTC time.")
@click.option("--until", type=UTC_TIME, default=None, help="Only spans that started before this UTC time.")
def health(where: Where, fmt: str, max_rows: int, what: str, since: Any, until: Any) -> None:
    """Error rates, retries, fallbacks and latency of providers (provider_health), skills (skill_health) or
    tools (tool_usage), worst first."""
    from otel_agent.read.health import health_table

    if since is not None and until is not None and until <= since:
        raise click.BadParameter("--until must be after --since", param_hint="--until")
    show(where, fmt, lambda src: health_table(src, what, _iso(since), _iso(until), max_rows))


COMMANDS: list[click.Command] = [claims, artifacts, cost, health]
