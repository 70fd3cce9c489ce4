"""Command: ``otel-agent export`` (report, bundle)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from otel_agent.options import where_options
from otel_agent.read.stores import Where


@click.group()
def export() -> None:
    """Export an artifact version as a Markdown report, or a run's evidence as a JSON bundle."""


def _emit(text: str, out: str | None) -> None:
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text, nl=False, color=True)  # data: escape sequences in it are kept


out_option = click.option(
    "--out", "-o", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of standard output."
)


@export.command("report")
@click.argument("artifact_or_version_id")
@click.option(
    "--version",
    "version",
    type=click.IntRange(min=1),
    default=None,
    help="Version number [latest approved, else latest].",
)
@click.option(
    "--citations",
    type=click.Choice(["inline", "numbered"]),
    default="inline",
    show_default=True,
    help="inline: evidence ids after each claim ([ev_123] [ev_124]); numbered: [1] [2] and a References list.",
)
@out_option
@where_options
def export_report(
    artifact_or_version_id: str, version: int | None, citations: str, out: str | None, where: Where
) -> None:
    """The Markdown report of an artifact version, with citations injected after each claim."""
    from otel_agent.read.reports import build_report
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        report = build_report(src, artifact_or_version_id, version, citations)  # type: ignore[arg-type]
    _emit(report.markdown, out)


@export.command("bundle")
@click.argument("run_id")
@out_option
@where_options
def export_bundle(run_id: str, out: str | None, where: Where) -> None:
    """The JSON evidence bundle of a run (runId, sources, evidence, claims, citations, conflicts, reviews,
    artifacts)."""
    from otel_agent.read.artifacts import evidence_bundle
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        bundle = evidence_bundle(src, run_id)
    _emit(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", out)


COMMANDS: list[click.Command] = [export]
