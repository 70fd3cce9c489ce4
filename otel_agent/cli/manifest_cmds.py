"""``otel-agent manifest RUN_ID``: seed 001's workflow manifest of one run and its business timeline, from the
``workflow_manifest_for_run`` and ``business_timeline_for_run`` macros (docs/views-evidence.md, "Workflow
manifest"), through the read layer (``read.runs``) like every reading command."""

from __future__ import annotations

from typing import Any

import click

from otel_agent.options import reading_options
from otel_agent.read.stores import Where


def _value(column: str, value: Any) -> str:
    from otel_agent.read.words import cut, escape, usd

    if value is None:
        return "-"
    if column.endswith("_usd"):
        return usd(value)
    if isinstance(value, list):
        return ", ".join(cut(escape(str(v)), 60) for v in value) or "-"
    return cut(escape(str(value)), 80)


def _budget(m: dict[str, Any], kind: str, max_key: str, used_key: str) -> str:
    limit, used = m[max_key], m[used_key]
    text = f"{_value(used_key, used)} of {_value(max_key, limit)}" if limit is not None else f"{_value(used_key, used)}"
    if limit is not None and kind in (m.get("budget_exceeded_limits") or []):
        text += " " + click.style("EXCEEDED", fg="red")
    return text


def manifest_lines(m: dict[str, Any]) -> list[str]:
    """The manifest as ``key: value`` lines (what seed 001's workflow_manifest.json answers)."""
    if m["authorizations"]:
        verdict = "granted" if m["authorized"] else "refused" if m["authorized"] is False else "recorded"
        authorization = (
            f"{verdict} by {_value('by', m['authorized_by'])} at {m['authorized_at']} "
            f"(scope {_value('scope', m['authorization_scope'])}; {m['authorizations']} recorded)"
        )
    else:
        authorization = "none recorded"
    final = _value("final", m["final_decision"])
    if m["final_decision_id"] is not None:
        final += f" ({m['final_decision_source']}"
        final += f", by {_value('by', m['final_decided_by'])}" if m["final_decided_by"] else ""
        final += f"; decision {_value('id', m['final_decision_id'])})"
    if m["pending_human_reviews"]:
        final += click.style(f"  {m['pending_human_reviews']} human review(s) pending", fg="yellow")
    error = _value("error", m["error_type"])
    if m["failed_step"]:
        error += f" (step {_value('step', m['failed_step'])})"
    pairs = [
        ("run", f"{m['run_id']}  {_value('w', m['workflow_name'])}"),
        ("status", m["status"]),
        ("provider", f"{_value('p', m['provider'])} (all: {_value('providers', m['providers'])})"),
        ("target", _value("target", m["target"])),
        ("authorization", authorization),
        ("budget model calls", _budget(m, "model_calls", "budget_max_model_calls", "model_calls_used")),
        ("budget tool calls", _budget(m, "tool_calls", "budget_max_tool_calls", "tool_calls_used")),
        ("budget cost", _budget(m, "cost_usd", "budget_max_cost_usd", "cost_used_usd")),
        ("current step", _value("step", m["current_step"])),
        ("current iteration", _value("iteration", m["current_iteration"])),
        ("final decision", final),
        ("repairs / recoveries", f"{m['repairs']} / {m['recoveries']}"),
        ("error", error),
    ]
    return [f"{k + ':':<22}{v}" for k, v in pairs]


@click.command("manifest")
@click.argument("run_id")
@reading_options
@click.option("--timeline", "timeline_only", is_flag=True, help="Only the business timeline's rows.")
def manifest_command(run_id: str, where: Where, fmt: str, max_rows: int, timeline_only: bool) -> None:
    """A run's workflow manifest (status, provider, target, authorization, budget used of max, current step and
    iteration, final decision, error) and its business timeline: gate results, decisions (agent output, policy
    gate, effective), repairs, human reviews, artifact versions, evidence, budget events, recoveries.

    --format csv/json print the manifest row (with --timeline: the timeline's rows) for programs.
    """
    from otel_agent.cli.render import emit, render
    from otel_agent.errors import NotFoundError
    from otel_agent.read.runs import MANIFEST_SQL, business_timeline
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        found = src.table(MANIFEST_SQL, {"run_id": run_id}, max_rows=1)
        if not found.rows:
            raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
        if fmt != "table" and not timeline_only:
            emit(found, fmt)
            return
        timeline = business_timeline(src, run_id, max_rows, short=fmt == "table")
    if timeline_only:
        emit(timeline, fmt)
        return
    from otel_agent.cli.render import fit_lines

    for line in fit_lines(manifest_lines(dict(zip(found.columns, found.rows[0], strict=True)))):
        click.echo(line)
    click.echo("")
    click.echo(render(timeline, fmt))


COMMANDS: list[click.Command] = [manifest_command]
