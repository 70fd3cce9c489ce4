"""Commands over seed 001's decision path (issue 15): what a model call depended on and produced
(``call_dependencies``), the repairs (``repairs``) and a candidate's history (``candidate_history``). Each reads
one documented view (docs/views-evidence.md) through ``run_sql``."""

from __future__ import annotations

import click

from otel_agent.cli.list_cmds import _show, run_filter
from otel_agent.cli.options import limit_option, reading_options

DEPENDENCIES_SQL = """
SELECT run_id, step_name, iteration, agent_name, call_kind, subject, prompt_name, prompt_version, direction, ref,
       artifact_id, artifact_version
FROM call_dependencies
WHERE (?::VARCHAR IS NULL OR run_id = ?::VARCHAR)
  AND (?::VARCHAR IS NULL OR step_name = ?::VARCHAR OR prompt_name = ?::VARCHAR OR agent_name = ?::VARCHAR)
  AND (?::BIGINT IS NULL OR iteration = ?::BIGINT)
ORDER BY run_id, start_time, span_id, direction, position
LIMIT ?
"""


@click.command()
@reading_options
@run_filter
@click.option("--of", "of", default=None, help="Only calls of this step name, prompt name or agent name.")
@click.option("--iteration", type=click.IntRange(min=0), default=None, help="Only this round.")
@limit_option(200, "references")
def dependencies(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
                 run_id: str | None, of: str | None, iteration: int | None, limit: int) -> None:  # fmt: skip
    """What model calls and tool invocations read (input) and produced (output), from call_dependencies:
    e.g. otel-agent dependencies --of quality_review --iteration 2."""
    params = [run_id, run_id, of, of, of, of, iteration, iteration, limit]
    _show(DEPENDENCIES_SQL, params, db, receiver, token, fmt, max_rows)


REPAIRS_SQL = """
SELECT repair_id, iteration, action, applied, target, before, after, reason, computed_by, computed_by_name,
       from_version_id, to_version_id, run_id
FROM repairs
WHERE ?::VARCHAR IS NULL OR run_id = ?::VARCHAR
ORDER BY run_id, iteration NULLS LAST, repaired_at, repair_id
LIMIT ?
"""

CANDIDATES_SQL = """
SELECT version, iteration, version_id, produced_by_repair_id, evaluation, evaluation_score, evaluation_reason,
       repair_action, repair_applied, repair_before, repair_after, repair_computed_by, next_version_id
FROM candidate_history
WHERE artifact_id = ?
ORDER BY version
LIMIT ?
"""


@click.command()
@reading_options
@run_filter
@limit_option(200, "repairs")
def repairs(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
            run_id: str | None, limit: int) -> None:  # fmt: skip
    """Repairs in round order: action, applied, before → after, why, and who computed it (deterministic tool,
    model or human), from the repairs view."""
    _show(REPAIRS_SQL, [run_id, run_id, limit], db, receiver, token, fmt, max_rows, run_id=run_id)


@click.command()
@reading_options
@click.argument("artifact_id")
@limit_option(200, "versions")
def candidates(db: tuple[str, ...], receiver: str | None, token: str | None, fmt: str, max_rows: int,
               artifact_id: str, limit: int) -> None:  # fmt: skip
    """A candidate's history: each version with its round, its evaluation and the repair that started from it,
    from candidate_history."""
    _show(CANDIDATES_SQL, [artifact_id, limit], db, receiver, token, fmt, max_rows, artifact_id=artifact_id)


COMMANDS: list[click.Command] = [dependencies, repairs, candidates]
