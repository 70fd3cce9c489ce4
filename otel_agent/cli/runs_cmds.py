"""Commands: runs, run, metrics (issue 4). Each command imports its heavy modules inside its body (see cli/main.py).

All three read the derived run views (docs/views-runs.md) through ``otel_agent.query.client.run_sql``: from a
live receiver (``--receiver``, or the one holding ``--db``) or from the closed file(s).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from otel_agent.cli.options import db_option, format_option, receiver_option, token_option

DEFAULT_DB = "./otel_agent.duckdb"

RUNS_SQL = """
SELECT run_id, workflow_name AS workflow, status, start_time, round(duration_ms / 1000, 3) AS duration_s,
       steps, provider_calls AS calls, tool_invocations AS tools, input_tokens AS tokens_in,
       output_tokens AS tokens_out, round(cost_usd, 6) AS cost_usd, unpriced_calls AS unpriced,
       guard_blocks AS blocks, errors, budget_exceeded
FROM runs
WHERE (?::VARCHAR IS NULL OR status = ?::VARCHAR)
ORDER BY start_time DESC, run_id
LIMIT ?
"""

RUN_SQL = "SELECT * FROM runs_for_run(?)"

# Every span of the run with what the tree shows; oa_priced is the classified spans with their cost.
TREE_SQL = """
SELECT span_id, parent_span_id, category, record_kind, span_name, duration_ms, status_code, is_error, error_type,
       workflow_name, agent_name, step_name, skill_name, skill_version, provider, request_model, response_model,
       input_tokens, output_tokens, cache_read_tokens, cost_usd, cost_source, cost_missing_reason, retry_count,
       fallback_count, fallback_from_provider, fallback_from_model, nested_call, tool_name, tool_provider,
       guard_name, guard_outcome, guard_reason, verifier_name, verifier_outcome, verifier_score, verifier_reason,
       receipt_transition, handoff_to, handoff_from, artifact_id, artifact_version_number
FROM oa_priced(?)
WHERE run_id = ?
ORDER BY start_time, end_time DESC, span_id
"""

METRICS_SQL = "SELECT metric, value, unit FROM run_metrics_for_run(?) ORDER BY metric"

# What the tree shows by default; --all adds the records (evidence, claims, ...) and unclassified spans.
TREE_CATEGORIES = frozenset(
    {"flow_run", "step", "skill_invocation", "provider_call", "tool_invocation", "guard_result", "verifier_result",
     "retrieval", "handoff"}
)  # fmt: skip
TIMELINE_KINDS = frozenset({"artifact_version"})


def _query(sql: str, params: list[Any], db: Sequence[str], receiver: str | None, token: str | None) -> Any:
    from otel_agent.errors import OtelAgentError
    from otel_agent.query.client import run_sql

    try:
        return run_sql(sql, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=params)
    except OtelAgentError as exc:
        raise click.ClickException(str(exc)) from exc


def _rows(result: Any) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def _ms(value: Any) -> str:
    if value is None:
        return "?"
    value = float(value)
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.2f} ms"


def _usd(value: Any) -> str:
    return "?" if value is None else f"${float(value):.6f}"


def _tokens(inp: Any, out: Any) -> str:
    if inp is None and out is None:
        return ""
    return f"tokens {'?' if inp is None else int(inp)}→{'?' if out is None else int(out)}"


def _status(row: dict[str, Any]) -> str:
    if row.get("is_error"):
        return click.style(f"ERROR {row.get('error_type') or ''}".rstrip(), fg="red")
    return ""


def describe(row: dict[str, Any]) -> str:
    """One tree line for a classified span."""
    cat = row["category"]
    parts: list[str]
    if cat == "flow_run":
        parts = [click.style(f"run {row.get('workflow_name') or row['span_name']}", bold=True), _ms(row["duration_ms"])]
    elif cat == "step":
        parts = [click.style(f"step {row.get('step_name') or row['span_name']}", bold=True), _ms(row["duration_ms"])]
    elif cat == "skill_invocation":
        parts = [f"skill {row.get('skill_name')}@{row.get('skill_version')}", _ms(row["duration_ms"])]
    elif cat == "provider_call":
        model = row.get("request_model") or "?"
        if row.get("response_model") and row["response_model"] != model:
            model += f" ({row['response_model']})"
        parts = [f"call {row.get('provider') or '?'}/{model}", _ms(row["duration_ms"]),
                 _tokens(row.get("input_tokens"), row.get("output_tokens"))]  # fmt: skip
        if row.get("cost_usd") is not None:
            parts.append(f"{_usd(row['cost_usd'])} ({row.get('cost_source')})")
        elif row.get("cost_missing_reason"):
            parts.append(f"cost ? ({row['cost_missing_reason']})")
        if row.get("retry_count"):
            parts.append(f"retries {int(row['retry_count'])}")
        if row.get("fallback_count"):
            parts.append(
                click.style(
                    f"fallback {row.get('fallback_from_provider')}/{row.get('fallback_from_model')}"
                    f" → {row.get('provider')}/{row.get('request_model')}",
                    fg="yellow",
                )
            )
        if row.get("nested_call"):
            parts.append("(same call seen by another instrumentation; not counted)")
    elif cat == "tool_invocation":
        name = row.get("tool_name") or row["span_name"]
        if row.get("tool_provider"):
            name += f" ({row['tool_provider']})"
        parts = [f"tool {name}", _ms(row["duration_ms"])]
        if row.get("cost_usd") is not None:
            parts.append(_usd(row["cost_usd"]))
        if row.get("retry_count"):
            parts.append(f"retries {int(row['retry_count'])}")
    elif cat == "guard_result":
        outcome = row.get("guard_outcome") or "no outcome"
        text = f"guard {row.get('guard_name')}: {outcome}"
        if row.get("guard_reason"):
            text += f" ({row['guard_reason']})"
        parts = [click.style(text, fg="red" if outcome == "blocked" else None)]
    elif cat == "verifier_result":
        outcome = row.get("verifier_outcome") or "no outcome"
        text = f"verify {row.get('verifier_name')}: {outcome}"
        if row.get("verifier_score") is not None:
            text += f" score {float(row['verifier_score']):g}"
        if row.get("verifier_reason"):
            text += f" ({row['verifier_reason']})"
        parts = [click.style(text, fg="red" if outcome == "failed" else None)]
    elif cat == "handoff":
        what = f"handoff {row['receipt_transition']}" if row.get("receipt_transition") else "handoff"
        parts = [f"{what} → {row.get('handoff_to') or '?'}"]
        if row.get("handoff_from"):
            parts.append(f"from {row['handoff_from']}")
    elif row.get("record_kind") == "artifact_version":
        parts = [f"artifact {row.get('artifact_id')} v{row.get('artifact_version_number') or '?'}"]
    elif row.get("record_kind"):
        parts = [f"record {row['record_kind']}"]
    else:
        parts = [f"span {row['span_name']} ({cat})"]
    parts.append(_status(row))
    return "  ".join(p for p in parts if p)


def build_tree(rows: list[dict[str, Any]], show_all: bool) -> list[str]:
    """Lines of the run's tree: shown spans hang under their nearest shown ancestor (parents may be hidden or
    missing); siblings keep start-time order."""
    by_id = {r["span_id"]: r for r in rows}

    def shown(r: dict[str, Any]) -> bool:
        return show_all or r["category"] in TREE_CATEGORIES or r.get("record_kind") in TIMELINE_KINDS

    def shown_parent(r: dict[str, Any]) -> str | None:
        seen: set[str] = set()
        parent = r.get("parent_span_id")
        while parent is not None and parent in by_id and parent not in seen:
            seen.add(parent)
            if shown(by_id[parent]):
                return parent
            parent = by_id[parent].get("parent_span_id")
        return None

    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        if shown(r):
            children.setdefault(shown_parent(r), []).append(r)
    lines: list[str] = []

    def walk(node: str | None, prefix: str) -> None:
        kids = children.get(node, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{describe(r)}")
            walk(r["span_id"], prefix + ("   " if last else "│  "))

    for r in children.get(None, []):
        lines.append(describe(r))
        walk(r["span_id"], "")
    return lines


def summary(run: dict[str, Any]) -> list[str]:
    status = run["status"]
    color = {"ok": "green", "error": "red", "incomplete": "yellow"}.get(status)
    head = f"run {run['run_id']}  {run.get('workflow_name') or ''}  " + click.style(status, fg=color, bold=True)
    if run.get("error_type"):
        head += f" ({run['error_type']})"
    lines = [head]
    agent = f"agent {run['agent_name']}  " if run.get("agent_name") else ""
    lines.append(
        f"{agent}service {run.get('service_name') or '?'}  started {run.get('start_time')}  "
        f"duration {_ms(run.get('duration_ms'))}  conventions {', '.join(run.get('conventions') or [])}"
    )
    lines.append(
        f"steps {run['steps']}  skills {run['skill_invocations']}  calls {run['provider_calls']}  "
        f"tools {run['tool_invocations']}  guard blocks {run['guard_blocks']}/{run['guard_checks']}  "
        f"verifier failures {run['verifier_failures']}  errors {run['errors']}  retries {run['retries']}  "
        f"fallbacks {run['fallbacks']}"
    )
    cost = f"cost {_usd(run.get('cost_usd'))}"
    if run.get("unpriced_calls"):
        cost += f" (+{run['unpriced_calls']} unpriced call{'s' if run['unpriced_calls'] != 1 else ''})"
    lines.append(f"{_tokens(run.get('input_tokens'), run.get('output_tokens'))}  {cost}")
    limits = {
        "model calls": run.get("budget_max_model_calls"),
        "tool calls": run.get("budget_max_tool_calls"),
        "cost": run.get("budget_max_cost_usd"),
    }
    if any(v is not None for v in limits.values()):
        text = "budget " + ", ".join(f"{k} ≤ {v:g}" for k, v in limits.items() if v is not None)
        if run.get("budget_exceeded"):
            text += click.style(f"  EXCEEDED: {', '.join(run.get('budget_exceeded_limits') or [])}", fg="red")
        lines.append(text)
    return lines


@click.command("runs")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
@click.option("--limit", type=int, default=20, show_default=True, help="How many runs (most recent first).")
@click.option(
    "--status", type=click.Choice(["ok", "error", "incomplete"]), default=None, help="Only runs in this state."
)
def runs_command(
    db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, limit: int, status: str | None
) -> None:
    """Recent runs: status, duration, calls, tokens, cost, guard blocks, errors."""
    from otel_agent.cli.render import render

    result = _query(RUNS_SQL, [status, status, limit], db, receiver, token)
    click.echo(render(result, fmt))


@click.command("run")
@click.argument("run_id")
@db_option(multiple=True)
@receiver_option
@token_option
@click.option("--all", "show_all", is_flag=True, help="Also show records (evidence, claims, ...) and other spans.")
def run_command(run_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, show_all: bool) -> None:
    """One run as a tree: steps, skills, calls and tools with durations, models, tokens, cost, guards, errors."""
    found = _rows(_query(RUN_SQL, [run_id], db, receiver, token))
    if not found:
        raise click.ClickException(f"no run {run_id!r} (list them with: otel-agent runs)")
    spans = _rows(_query(TREE_SQL, [run_id, run_id], db, receiver, token))
    for line in summary(found[0]):
        click.echo(line)
    click.echo("")
    for line in build_tree(spans, show_all):
        click.echo(line)


@click.command("metrics")
@click.argument("run_id")
@db_option(multiple=True)
@receiver_option
@token_option
@format_option
def metrics_command(run_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str) -> None:
    """A run's derived metrics (cost, usage, reliability, latency), from run_metrics."""
    from otel_agent.cli.render import render

    result = _query(METRICS_SQL, [run_id], db, receiver, token)
    if not result.rows:
        raise click.ClickException(f"no run {run_id!r} (list them with: otel-agent runs)")
    click.echo(render(result, fmt))


COMMANDS: list[click.Command] = [runs_command, run_command, metrics_command]
