"""Command: otel-agent demo (issue 3). It imports its heavy modules inside its body (see otel_agent/main.py)."""

from __future__ import annotations

import click

from otel_agent.config import DEFAULT_DB


@click.command()
@click.option(
    "--db",
    default=DEFAULT_DB,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="DuckDB file to write (must not exist yet, unless --replace).",
)
@click.option(
    "--embedded",
    is_flag=True,
    help="Write through the embedded DuckDBSpanExporter instead of OTLP/gRPC to an in-process receiver.",
)
@click.option("--replace", is_flag=True, help="Delete an existing --db file first.")
def demo(db: str, embedded: bool, replace: bool) -> None:
    """Run a deterministic, offline deep-research agent and store its telemetry.

    planner -> search (a retry, a provider fallback) -> verify (a guard blocks an uncited claim; two sources
    conflict) -> synthesize (a markdown report, then a regenerated v2) -> a fact-check handed off to a worker
    in a separate process (accepted, waiting for approval, completed, outcome verified), plus a delegation
    nobody accepts. No network beyond loopback, no LLM; the same records every run.
    """
    from otel_agent.demo.runner import run_demo
    from otel_agent.demo.summary import explore, summarize

    click.echo(f"otel-agent demo: deep research, {'embedded exporter' if embedded else 'OTLP/gRPC'} -> {db}")
    result = run_demo(db, embedded=embedded, replace=replace, echo=click.echo)
    click.echo("")
    click.echo(summarize(db, result.run_id))
    click.echo("")
    click.echo(explore(db, result.run_id))


COMMANDS: list[click.Command] = [demo]
