"""Listing commands over the public views: claims, artifacts, cost, health. Each reads one documented view
(docs/views-evidence.md, docs/views-runs.md) through ``run_sql`` and takes what every reading command takes
(``--db``, ``--receiver``, ``--token``, ``--format``, ``--max-rows``)."""

from __future__ import annotations

from typing import Any

import click

from otel_agent.cli.options import UTC_TIME, limit_option, reading_options
from otel_agent.config import DEFAULT_DB

CLAIM_STATUSES = ("supported", "unverified", "rejected", "conflicted")

CLAIMS_SQL = """
SELECT claim_id, status, why, citations, valid_citations, supporting_evidence, text, run_id, artifact_version_id
FROM claim_support
WHERE (?::VARCHAR IS NULL OR run_id = ?::VARCHAR) AND (?::VARCHAR IS NULL OR status = ?::VARCHAR)
ORDER BY run_id, claim_id
LIMIT ?
"""

ARTIFACTS_SQL = """
SELECT artifact_id, name, type, status, versions, latest_version, latest_version_id, latest_approved_version,
       run_id, last_version_at
FROM artifacts
WHERE ?::VARCHAR IS NULL OR run_id = ?::VARCHAR
ORDER BY last_version_at DESC NULLS LAST, artifact_id
LIMIT ?
"""

COST_SQL = """
SELECT run_id, step_name, skill_ref, item_type, provider, model, tool_name, calls, input_tokens, output_tokens,
       cost_usd, unpriced_calls
FROM cost_breakdown_for_run(?::VARCHAR)
ORDER BY cost_usd DESC, run_id, step_name NULLS LAST, skill_ref NULLS LAST, item_type, provider, model, tool_name
LIMIT ?
"""

RUN_EXISTS_SQL = "SELECT 1 FROM runs_for_run(?) LIMIT 1"
ARTIFACT_EXISTS_SQL = "SELECT 1 FROM artifacts WHERE artifact_id = ? LIMIT 1"

HEALTH_SQL = {
    "providers": """
SELECT provider, model, calls, errors, error_rate, retries, fallbacks_out, fallbacks_in, p50_latency_ms,
       p95_latency_ms, input_tokens, output_tokens, last_call_at
FROM provider_health_between(CAST(? AS TIMESTAMP), CAST(? AS TIMESTAMP))
ORDER BY error_rate DESC, calls DESC, provider, model
""",
    "skills": """
SELECT skill_ref, invocations, errors, error_rate, p50_duration_ms, p95_duration_ms, last_invocation_at
FROM skill_health_between(CAST(? AS TIMESTAMP), CAST(? AS TIMESTAMP))
ORDER BY error_rate DESC, invocations DESC, skill_ref
""",
    "tools": """
SELECT tool_name, tool_provider, calls, errors, error_rate, retries, p50_latency_ms, p95_latency_ms, cost_usd,
       last_call_at
FROM tool_usage_between(CAST(? AS TIMESTAMP), CAST(? AS TIMESTAMP))
ORDER BY error_rate DESC, calls DESC, tool_name, tool_provider
""",
}


def _show(sql: str, params: list[Any], db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str,
          max_rows: int, run_id: str | None = None, artifact_id: str | None = None) -> None:  # fmt: skip
    """Print the rows of ``sql``. An unknown ``run_id`` or ``artifact_id`` (what the rows were filtered by) is a
    mistake — one line, exit 2 — not an empty table; whether it exists is asked only when nothing matched."""
    from otel_agent.cli.render import emit
    from otel_agent.errors import NotFoundError
    from otel_agent.query.client import run_sql

    def none_of(check: str, value: str) -> bool:
        found = run_sql(check, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=[value])
        return not found.rows

    result = run_sql(sql, list(db) or [DEFAULT_DB], receiver=receiver, token=token, params=params, max_rows=max_rows)
    if not result.rows and run_id is not None and none_of(RUN_EXISTS_SQL, run_id):
        raise NotFoundError(f"no run {run_id!r} (list them with: otel-agent runs)")
    if not result.rows and artifact_id is not None and none_of(ARTIFACT_EXISTS_SQL, artifact_id):
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
def claims(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
           run_id: str | None, status: str | None, limit: int) -> None:  # fmt: skip
    """Claims with their support status (supported, unverified, rejected, conflicted) and why, from
    claim_support. Follow one with: otel-agent lineage CLAIM_ID."""
    _show(CLAIMS_SQL, [run_id, run_id, status, status, limit], db, receiver, token, fmt, max_rows, run_id=run_id)


@click.command()
@reading_options
@run_filter
@limit_option(100, "artifacts (latest version first)")
def artifacts(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
              run_id: str | None, limit: int) -> None:  # fmt: skip
    """Artifacts with their versions and review status, from the artifacts view. Print one with:
    otel-agent export report ARTIFACT_ID."""
    _show(ARTIFACTS_SQL, [run_id, run_id, limit], db, receiver, token, fmt, max_rows, run_id=run_id)


@click.command()
@reading_options
@run_filter
@limit_option(100, "rows (most expensive first)")
def cost(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
         run_id: str | None, limit: int) -> None:  # fmt: skip
    """Where the money went: cost per run, step, skill, provider/model and tool, from cost_breakdown."""
    _show(COST_SQL, [run_id, limit], db, receiver, token, fmt, max_rows, run_id=run_id)


@click.command()
@reading_options
@click.option(
    "--of", "what", type=click.Choice(sorted(HEALTH_SQL)), default="providers", show_default=True, help="Which."
)
@click.option("--since", type=UTC_TIME, default=None, help="Only spans that started at or after this UTC time.")
@click.option("--until", type=UTC_TIME, default=None, help="Only spans that started before this UTC time.")
def health(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int, what: str,
           since: Any, until: Any) -> None:  # fmt: skip
    """Error rates, retries, fallbacks and latency of providers (provider_health), skills (skill_health) or
    tools (tool_usage), worst first."""
    if since is not None and until is not None and until <= since:
        raise click.BadParameter("--until must be after --since", param_hint="--until")
    _show(HEALTH_SQL[what], [_iso(since), _iso(until)], db, receiver, token, fmt, max_rows)


COMMANDS: list[click.Command] = [claims, artifacts, cost, health]
