"""Sessions and evaluations: conversations (runs sharing a ``gen_ai.conversation.id``) and the evaluation
results recorded about calls (docs/views-runs.md ``sessions``, ``evaluations``).
"""

from __future__ import annotations

from typing import Any

from otel_agent.read.source import Source, Table

SESSIONS_SQL = """
SELECT session_id, runs, failed_runs, agent_names, first_start, last_end, provider_calls, tool_invocations,
       input_tokens, output_tokens, cost_usd, unpriced_calls, errors
FROM sessions
WHERE ($session_id::VARCHAR IS NULL OR session_id = $session_id::VARCHAR)
  AND ($agent::VARCHAR IS NULL OR list_contains(agent_names, $agent::VARCHAR))
ORDER BY last_end DESC NULLS LAST, session_id
LIMIT $limit OFFSET $offset
"""


def sessions_table(
    src: Source, session_id: str | None = None, agent: str | None = None, limit: int = 50, offset: int = 0
) -> Table:
    """Conversations, most recent first (``offset``: a later page)."""
    params = {"session_id": session_id, "agent": agent, "limit": limit, "offset": offset}
    return src.table(SESSIONS_SQL, params, max_rows=limit)


def session_runs(src: Source, session_id: str, limit: int = 50) -> Table:
    """The runs of one conversation, in start order."""
    sql = (
        "SELECT run_id, workflow_name, agent_name, status, start_time, duration_ms, cost_usd, unpriced_calls, "
        "errors FROM runs WHERE session_id = $session_id ORDER BY start_time, run_id LIMIT $limit"
    )
    return src.table(sql, {"session_id": session_id, "limit": limit}, max_rows=limit)


def evaluations_table(
    src: Source, run_id: str | None = None, limit: int = 50, trace_id: str | None = None, span_id: str | None = None
) -> Table:
    """Evaluation results (``gen_ai.evaluation.result``), newest first; ``run_id``: of that run only;
    ``trace_id`` / ``span_id``: of that judged span only."""
    sql = (
        "SELECT * FROM evaluations WHERE ($run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR) "
        "AND ($trace_id::VARCHAR IS NULL OR trace_id = $trace_id::VARCHAR) "
        "AND ($span_id::VARCHAR IS NULL OR span_id = $span_id::VARCHAR) "
        "ORDER BY time DESC LIMIT $limit"
    )
    params = {"run_id": run_id, "trace_id": trace_id, "span_id": span_id, "limit": limit}
    return src.table(sql, params, max_rows=limit)


SESSION_TURNS_SQL = """
SELECT run_id, workflow_name, agent_name, status, error_type, trace_id, start_time, duration_ms, cost_usd,
       unpriced_calls, errors, provider_calls, tool_invocations, input_tokens, output_tokens
FROM runs
WHERE session_id = $session_id
ORDER BY start_time, run_id
LIMIT $limit
"""


def session_turns(src: Source, session_id: str, limit: int = 200) -> list[dict[str, Any]]:
    """The runs of one conversation in start order, with what the console's Sessions page shows of each."""
    return src.rows(SESSION_TURNS_SQL, {"session_id": session_id, "limit": limit}, max_rows=limit)
