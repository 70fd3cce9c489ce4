"""Commands over seed 001's decision path (issue 15): what a model call depended on and produced
(``call_dependencies``). Each reads one documented view (docs/views-evidence.md) through ``run_sql``."""

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


COMMANDS: list[click.Command] = [dependencies]
