"""Commands over seed 001's decision path (issue 15): what a model call depended on and produced
(``call_dependencies``), the repairs (``repairs``) and a candidate's history (``candidate_history``). Each reads
one documented view (docs/views-evidence.md) through the read layer (``read.evidence``)."""

from __future__ import annotations

import click

from otel_agent.cli.list_cmds import run_filter, show
from otel_agent.options import limit_option, reading_options
from otel_agent.read.stores import Where


@click.command()
@reading_options
@run_filter
@click.option("--of", "of", default=None, help="Only calls of this step name, prompt name or agent name.")
@click.option("--iteration", type=click.IntRange(min=0), default=None, help="Only this round.")
@limit_option(200, "references")
def dependencies(where: Where, fmt: str, max_rows: int, run_id: str | None, of: str | None, iteration: int | None,
                 limit: int) -> None:  # fmt: skip
    """What model calls and tool invocations read (input) and produced (output), from call_dependencies:
    e.g. otel-agent dependencies --of quality_review --iteration 2."""
    from otel_agent.read.evidence import dependencies_table

    show(where, fmt, lambda src: dependencies_table(src, run_id, of, iteration, limit, max_rows))


@click.command()
@reading_options
@run_filter
@limit_option(200, "repairs")
def repairs(where: Where, fmt: str, max_rows: int, run_id: str | None, limit: int) -> None:
    """Repairs in round order: action, applied, before → after, why, and who computed it (deterministic tool,
    model or human), from the repairs view."""
    from otel_agent.read.evidence import repairs_table

    show(where, fmt, lambda src: repairs_table(src, run_id, limit, max_rows), run_id=run_id)


@click.command()
@reading_options
@click.argument("artifact_id")
@limit_option(200, "versions")
def candidates(where: Where, fmt: str, max_rows: int, artifact_id: str, limit: int) -> None:
    """A candidate's history: each version with its round, its evaluation and the repair that started from it,
    from candidate_history."""
    from otel_agent.read.evidence import candidates_table

    show(where, fmt, lambda src: candidates_table(src, artifact_id, limit, max_rows), artifact_id=artifact_id)


COMMANDS: list[click.Command] = [dependencies, repairs, candidates]
