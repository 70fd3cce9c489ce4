"""Commands: runs, run, metrics (issue 4). Each command imports its heavy modules inside its body (see cli/main.py).

All three read public run views (docs/views-runs.md; the tree: run_spans) through
``otel_agent.query.client.run_sql``: from a live receiver (``--receiver``, or the one holding ``--db``) or from
the closed file(s).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from otel_agent.cli.options import limit_option, reading_options
from otel_agent.config import DEFAULT_DB

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

# Every span of the run with what the tree shows: the public per-run view run_spans (docs/views-runs.md).
TREE_SQL = "SELECT * FROM run_spans_for_run(?) ORDER BY start_time, end_time DESC, span_id"

# labels hold a JSON object: typed JSON, so --format json carries it as one
METRICS_SQL = (
    "SELECT metric, value, unit, labels::JSON AS labels FROM run_metrics_for_run(?) ORDER BY metric, labels NULLS FIRST"
)

# What the tree shows by default; --all adds the records (evidence, claims, ...) and unclassified spans.
TREE_CATEGORIES = frozenset(
    {"flow_run", "step", "skill_invocation", "provider_call", "tool_invocation", "guard_result", "verifier_result",
     "retrieval", "handoff"}
)  # fmt: skip
# Records drawn under their step by default (issue 15: what a step found, concluded and produced).
TIMELINE_KINDS = frozenset({"evidence_item", "claim", "artifact_version"})

# Their details (excerpt, claim text and support status) from the evidence views (docs/views-evidence.md).
RECORD_DETAILS_SQL = """
SELECT 'evidence_item' AS kind, evidence_id AS id, confidence AS label, excerpt AS text FROM evidence_items
WHERE run_id = ?
UNION ALL
SELECT 'claim', claim_id, status, text FROM claim_support WHERE run_id = ?
"""
CLAIM_COLORS = {"supported": "green", "unverified": "yellow", "conflicted": "red", "rejected": "red"}

# Why a call has no cost, in words (cost_missing_reason, docs/views-runs.md "Cost").
COST_MISSING = {
    "no_model": "no model named",
    "no_usage": "no token usage reported",
    "no_price": "no price for this model",
    "not_reported": "not reported",
}
STATUS_MESSAGE_WIDTH = 80


def _query(
    sql: str, params: list[Any], db: Sequence[str], receiver: str | None, token: str | None, max_rows: int = 10_000
) -> Any:
    from otel_agent.query.client import run_sql

    return run_sql(sql, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=params, max_rows=max_rows)


def _rows(result: Any) -> list[dict[str, Any]]:
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def _text(value: Any, width: int = STATUS_MESSAGE_WIDTH) -> str:
    """Text from telemetry as the tree shows it: escaped, cut to ``width``."""
    from otel_agent.cli.render import cut, escape

    return cut(escape(str(value)), width)


def _ms(value: Any) -> str:
    if value is None:
        return "no duration"
    value = float(value)
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.2f} ms"


def _usd(value: Any) -> str:
    from otel_agent.cli.render import usd

    return "unknown" if value is None else usd(value)


def _tokens(inp: Any, out: Any) -> str:
    if inp is None and out is None:
        return ""
    if inp is None:
        return f"tokens out {int(out)} (in not reported)"
    if out is None:
        return f"tokens in {int(inp)} (out not reported)"
    return f"tokens {int(inp)}→{int(out)}"


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
            reason = row["cost_missing_reason"]
            parts.append(f"cost unknown ({COST_MISSING.get(reason, reason)})")
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


def build_tree(rows: list[dict[str, Any]], show_all: bool) -> list[str]:
    """Lines of the run's tree: shown spans hang under their nearest shown ancestor (parents may be hidden or
    missing); siblings keep start-time order."""
    return [line for _, _, line in tree_nodes(rows, show_all)]


def tree_nodes(rows: list[dict[str, Any]], show_all: bool) -> list[tuple[int, dict[str, Any], str]]:
    """(depth, row, line) of every shown span, in the tree's order."""
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
    nodes: list[tuple[int, dict[str, Any], str]] = []

    def walk(node: str | None, prefix: str, depth: int) -> None:
        kids = children.get(node, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            nodes.append((depth, r, f"{prefix}{'└─ ' if last else '├─ '}{describe(r)}"))
            walk(r["span_id"], prefix + ("   " if last else "│  "), depth + 1)

    for r in children.get(None, []):
        nodes.append((0, r, describe(r)))
        walk(r["span_id"], "", 1)
    return nodes


def summary(run: dict[str, Any]) -> list[str]:
    status = run["status"]
    color = {"ok": "green", "error": "red", "incomplete": "yellow"}.get(status)
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
    cost = f"cost {_usd(run.get('cost_usd'))}"
    if run.get("unpriced_calls"):
        cost += f" (+{run['unpriced_calls']} unpriced call{'s' if run['unpriced_calls'] != 1 else ''})"
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
    "--status", type=click.Choice(["ok", "error", "incomplete"]), default=None, help="Only runs in this state."
)
def runs_command(
    db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int, limit: int,
    status: str | None,
) -> None:  # fmt: skip
    """Recent runs: status, duration, calls, tokens, cost, guard blocks, errors."""
    from otel_agent.cli.render import emit

    result = _query(RUNS_SQL, [status, status, limit], db, receiver, token, max_rows)
    emit(result, fmt)


@click.command("run")
@click.argument("run_id")
@reading_options
@click.option("--all", "show_all", is_flag=True, help="Also show records (with their ids) and other spans.")
def run_command(
    run_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
    show_all: bool,
) -> None:  # fmt: skip
    """One run as a tree: steps, skills, calls and tools with durations, models, tokens, cost, guards, errors,
    and under their steps the evidence found, the claims made (with support status) and artifact versions.

    --format csv/json print the tree's spans as rows (in the tree's order, with their depth) instead.
    """
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.query.readonly import QueryResult

    found = _rows(_query(RUN_SQL, [run_id], db, receiver, token))
    if not found:
        raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
    result = _query(TREE_SQL, [run_id], db, receiver, token, max_rows)
    rows = _rows(result)
    if fmt == "table":
        details = {
            (d["kind"], d["id"]): d for d in _rows(_query(RECORD_DETAILS_SQL, [run_id, run_id], db, receiver, token))
        }
        for r in rows:
            d = details.get((r.get("record_kind"), r.get("record_id")))
            if d is not None:
                r["detail_label"], r["detail_text"] = d["label"], d["text"]
    nodes = tree_nodes(rows, show_all)
    if fmt != "table":
        columns = ["depth", *result.columns]
        out = [(depth, *(row[c] for c in result.columns)) for depth, row, _ in nodes]
        emit(QueryResult.of_rows(columns, ["BIGINT", *result.types], out, result.truncated), fmt)
        return
    from otel_agent.cli.render import fit_lines

    for line in fit_lines([*summary(found[0]), "", *(line for _, _, line in nodes)]):
        click.echo(line)
    if result.truncated:
        click.echo(f"(only the first {max_rows} spans: raise --max-rows to see them all)")


@click.command("metrics")
@click.argument("run_id")
@reading_options
def metrics_command(
    run_id: str, db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int
) -> None:
    """A run's derived metrics (cost, usage, reliability, latency, proxy_* with their labels), from run_metrics."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError

    result = _query(METRICS_SQL, [run_id], db, receiver, token, max_rows)
    if not result.rows:
        raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
    emit(result, fmt)


COMMANDS: list[click.Command] = [runs_command, run_command, metrics_command]
