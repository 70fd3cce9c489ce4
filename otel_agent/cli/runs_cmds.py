"""Commands: runs, run, metrics (issue 4). Each command imports its heavy modules inside its body (see cli/main.py).

All three read the read layer (``read.runs``: the public run views of docs/views-runs.md; the tree:
``run_spans_for_run`` drawn with ``read.tree``) where the data is: a live receiver (``--receiver``, or the one
holding ``--db``) or the closed file(s).
"""

from __future__ import annotations

from typing import Any

import click

from otel_agent.options import limit_option, reading_options
from otel_agent.read import words
from otel_agent.read.stores import Where
from otel_agent.read.tree import default_shown

CLAIM_COLORS = {"supported": "green", "unverified": "yellow", "conflicted": "red", "rejected": "red"}
STATUS_MESSAGE_WIDTH = 80


def _text(value: Any, width: int = STATUS_MESSAGE_WIDTH) -> str:
    """Text from telemetry as the tree shows it: escaped, cut to ``width``."""
    return words.shown(value, width)


_ms = words.duration
_usd = words.usd
_tokens = words.tokens


def _status(row: dict[str, Any]) -> str:
    """ERROR, the error type (unless it is only the _OTHER placeholder) and the span's status message."""
    if not row.get("is_error"):
        return ""
    error_type = row.get("error_type")
    message = row.get("status_message") or ""
    # _OTHER is a placeholder; an error type equal to the message was read from it (docs/views-runs.md, "Errors")
    error_type = None if error_type in ("_OTHER", message) else error_type
    text = "ERROR"
    if error_type and not message.startswith(error_type):
        text += f" {_text(error_type, 40)}"
    if message:
        text += f" {_text(message)}" if error_type and message.startswith(error_type) else f": {_text(message)}"
    if text == "ERROR" and row.get("error_type"):
        text += " (no error type or status message recorded)"
    return click.style(text, fg="red")


def describe(row: dict[str, Any]) -> str:
    """One tree line for a classified span."""
    cat = row["category"]
    parts: list[str]
    if cat == "flow_run":
        name = _text(row.get("workflow_name") or row["span_name"], 60)
        parts = [click.style(f"run {name}", bold=True), _ms(row["duration_ms"])]
    elif cat == "step":
        name = _text(row.get("step_name") or row["span_name"], 60)
        parts = [click.style(f"step {name}", bold=True), _ms(row["duration_ms"])]
    elif cat == "skill_invocation":
        version = f"@{row['skill_version']}" if row.get("skill_version") else " (no version)"
        parts = [f"skill {_text(row.get('skill_name') or row['span_name'], 60)}{version}", _ms(row["duration_ms"])]
    elif cat == "provider_call":
        model = _text(row.get("request_model") or row.get("response_model") or "unknown model", 60)
        if row.get("response_model") and row.get("request_model") and row["response_model"] != row["request_model"]:
            model += f" ({_text(row['response_model'], 60)})"
        provider = _text(row.get("provider") or "unknown provider", 40)
        parts = [f"call {provider}/{model}", _ms(row["duration_ms"]),
                 _tokens(row.get("input_tokens"), row.get("output_tokens"))]  # fmt: skip
        if row.get("cost_usd") is not None:
            parts.append(f"{_usd(row['cost_usd'])} ({row.get('cost_source')})")
        elif row.get("cost_missing_reason"):
            parts.append(words.unpriced(row["cost_missing_reason"]))
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
        name = _text(row.get("tool_name") or row["span_name"], 60)
        if row.get("tool_provider"):
            name += f" ({_text(row['tool_provider'], 40)})"
        parts = [f"tool {name}", _ms(row["duration_ms"])]
        if row.get("cost_usd") is not None:
            parts.append(_usd(row["cost_usd"]))
        if row.get("retry_count"):
            parts.append(f"retries {int(row['retry_count'])}")
    elif cat == "guard_result":
        outcome = row.get("guard_outcome") or "no outcome"
        text = f"guard {_text(row.get('guard_name') or row['span_name'], 60)}: {_text(outcome, 40)}"
        if row.get("guard_reason"):
            text += f" ({_text(row['guard_reason'])})"
        parts = [click.style(text, fg="red" if outcome == "blocked" else None)]
    elif cat == "verifier_result":
        outcome = row.get("verifier_outcome") or "no outcome"
        text = f"verify {_text(row.get('verifier_name') or row['span_name'], 60)}: {_text(outcome, 40)}"
        if row.get("verifier_score") is not None:
            text += f" score {float(row['verifier_score']):g}"
        if row.get("verifier_reason"):
            text += f" ({_text(row['verifier_reason'])})"
        parts = [click.style(text, fg="red" if outcome == "failed" else None)]
    elif cat == "handoff":
        what = f"handoff {_text(row['receipt_transition'], 40)}" if row.get("receipt_transition") else "handoff"
        target = _text(row["handoff_to"], 60) if row.get("handoff_to") else "(no target named)"
        parts = [f"{what} → {target}"]
        if row.get("handoff_from"):
            parts.append(f"from {_text(row['handoff_from'], 60)}")
    elif row.get("record_kind") == "evidence_item":
        parts = [f"evidence {_text(row.get('record_id') or 'unknown', 60)}"]
        if row.get("detail_label"):
            parts.append(f"({_text(row['detail_label'], 20)})")
        if row.get("detail_text"):
            parts.append(f'"{_text(row["detail_text"], 60)}"')
    elif row.get("record_kind") == "claim":
        parts = [f"claim {_text(row.get('record_id') or 'unknown', 60)}"]
        if row.get("detail_label"):
            parts.append(click.style(_text(row["detail_label"], 20), fg=CLAIM_COLORS.get(row["detail_label"])))
        if row.get("detail_text"):
            parts.append(f'"{_text(row["detail_text"], 60)}"')
    elif row.get("record_kind") == "artifact_version":
        number = row.get("artifact_version_number")
        version = f"v{number}" if number is not None else "(version number not recorded)"
        parts = [f"artifact {_text(row.get('artifact_id') or 'unknown', 60)} {version}"]
        if row.get("record_id"):
            parts.append(_text(row["record_id"], 60))
    elif row.get("record_kind"):
        parts = [f"record {_text(row['record_kind'], 40)}"]
        if row.get("record_id"):
            parts.append(_text(row["record_id"], 60))
    else:
        parts = [f"span {_text(row['span_name'], 60)} ({cat})"]
    parts.append(_status(row))
    return "  ".join(p for p in parts if p)


def tree_nodes(rows: list[dict[str, Any]], show_all: bool) -> list[tuple[int, dict[str, Any], str]]:
    """(depth, row, line) of every shown span in the tree's order (``read.tree``: shown spans hang under their
    nearest shown ancestor; siblings keep start-time order)."""
    from otel_agent.read.tree import build

    out: list[tuple[int, dict[str, Any], str]] = []
    for node in build(rows, None if show_all else default_shown):
        if node.depth == 0:
            out.append((0, node.row, describe(node.row)))
            continue
        guides = "".join("   " if last else "│  " for last in node.lasts[1:-1])
        out.append((node.depth, node.row, f"{guides}{'└─ ' if node.lasts[-1] else '├─ '}{describe(node.row)}"))
    return out


def build_tree(rows: list[dict[str, Any]], show_all: bool) -> list[str]:
    """Lines of the run's tree."""
    return [line for _, _, line in tree_nodes(rows, show_all)]


def summary(run: dict[str, Any]) -> list[str]:
    status = run["status"]
    color = {"ok": "green", "error": "red", "running": "cyan", "abandoned": "yellow"}.get(status)
    head = f"run {run['run_id']}  {run.get('workflow_name') or ''}  " + click.style(status, fg=color, bold=True)
    if run.get("error_type"):
        head += f" ({run['error_type']})"
    lines = [head]
    agent = f"agent {run['agent_name']}  " if run.get("agent_name") else ""
    lines.append(
        f"{agent}service {run.get('service_name') or '(none)'}  started {run.get('start_time')}  "
        f"duration {_ms(run.get('duration_ms'))}  conventions {', '.join(run.get('conventions') or [])}"
    )
    lines.append(
        f"steps {run['steps']}  skills {run['skill_invocations']}  calls {run['provider_calls']}  "
        f"tools {run['tool_invocations']}  guard blocks {run['guard_blocks']}/{run['guard_checks']}  "
        f"verifier failures {run['verifier_failures']}  errors {run['errors']}  retries {run['retries']}  "
        f"fallbacks {run['fallbacks']}"
    )
    cost = f"cost {words.cost(run.get('cost_usd'))}"
    if run.get("unpriced_calls"):
        cost += f" ({words.unpriced_calls(run['unpriced_calls'])})"
    lines.append("  ".join(p for p in (_tokens(run.get("input_tokens"), run.get("output_tokens")), cost) if p))
    limits = {
        "model calls": run.get("budget_max_model_calls"),
        "tool calls": run.get("budget_max_tool_calls"),
        "cost": run.get("budget_max_cost_usd"),
    }
    if any(v is not None for v in limits.values()):
        text = "budget " + ", ".join(
            f"{k} ≤ {_usd(v) if k == 'cost' else f'{v:g}'}" for k, v in limits.items() if v is not None
        )
        if run.get("budget_exceeded"):
            text += click.style(f"  EXCEEDED: {', '.join(run.get('budget_exceeded_limits') or [])}", fg="red")
        lines.append(text)
    return lines


@click.command("runs")
@reading_options
@limit_option(20, "runs (most recent first)")
@click.option(
    "--status",
    type=click.Choice(["ok", "error", "running", "abandoned"]),
    default=None,
    help="Only runs in this state.",
)
def runs_command(where: Where, fmt: str, max_rows: int, limit: int, status: str | None) -> None:
    """Recent runs: status, duration, calls, tokens, cost, guard blocks, errors; as a table, then a line for each
    listed run that is the key of a firing alert (csv and json: the rows only; ``otel-agent alerts`` lists them)."""
    from otel_agent.cli.render import emit
    from otel_agent.read.alerts import RUN_KINDS, firing_by_key
    from otel_agent.read.runs import runs_table
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        result = runs_table(src, status, limit, max_rows)
        marks = firing_by_key(src, RUN_KINDS) if fmt == "table" else {}
    emit(result, fmt)
    for row in result.rows:
        alerts = marks.get(row[0])
        if alerts:
            rules = ", ".join(words.shown(m.rule, 60) for m in alerts)
            click.echo(click.style(f"alert firing for {words.shown(row[0], 60)}: {rules}", fg="red"))


@click.command("run")
@click.argument("run_id")
@reading_options
@click.option("--all", "show_all", is_flag=True, help="Also show records (with their ids) and other spans.")
def run_command(run_id: str, where: Where, fmt: str, max_rows: int, show_all: bool) -> None:
    """One run as a tree: steps, skills, calls and tools with durations, models, tokens, cost, guards, errors,
    and under their steps the evidence found, the claims made (with support status) and artifact versions.

    --format csv/json print the tree's spans as rows (in the tree's order, with their depth) instead.
    """
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.read.runs import record_details, run_spans, run_summary
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        found = run_summary(src, run_id)
        if found is None:
            raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
        result = run_spans(src, run_id, limit=max_rows + 1, max_rows=max_rows)
        details = record_details(src, run_id) if fmt == "table" else {}
    # the tree's columns are run_spans_for_run's (docs/views-runs.md): the epoch-ns copies are the console's
    keep = [i for i, c in enumerate(result.columns) if c not in ("start_ns", "end_ns")]
    result = result.with_rows(
        [result.columns[i] for i in keep], [result.types[i] for i in keep],
        [tuple(row[i] for i in keep) for row in result.rows],
    )  # fmt: skip
    rows = result.dicts()
    for r in rows:
        d = details.get((r.get("record_kind"), r.get("record_id")))
        if d is not None:
            r["detail_label"], r["detail_text"] = d["label"], d["text"]
    nodes = tree_nodes(rows, show_all)
    if fmt != "table":
        out = [(depth, *(row[c] for c in result.columns)) for depth, row, _ in nodes]
        emit(result.with_rows(["depth", *result.columns], ["BIGINT", *result.types], out), fmt)
        return
    from otel_agent.cli.render import fit_lines

    for line in fit_lines([*summary(found), "", *(line for _, _, line in nodes)]):
        click.echo(line)
    if result.truncated:
        click.echo(f"(only the first {max_rows} spans: raise --max-rows to see them all)")


@click.command("metrics")
@click.argument("run_id")
@reading_options
def metrics_command(run_id: str, where: Where, fmt: str, max_rows: int) -> None:
    """A run's derived metrics (cost, usage, reliability, latency, proxy_* with their labels), from run_metrics."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.read.runs import metrics_table
    from otel_agent.read.stores import open_source

    with open_source(where) as src:
        result = metrics_table(src, run_id, max_rows)
    if not result.rows:
        raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
    emit(result, fmt)


COMMANDS: list[click.Command] = [runs_command, run_command, metrics_command]
