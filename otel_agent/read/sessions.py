"""Sessions and evaluations: conversations (runs sharing a ``gen_ai.conversation.id``) and the evaluation
results recorded about calls (docs/views-runs.md ``sessions``, ``evaluations``).
"""

from __future__ import annotations

from otel_agent.read.source import Source, Table

SESSIONS_SQL = """
SELECT session_id, runs, failed_runs, agent_names, first_start, last_end, provider_calls, tool_invocations,
       input_tokens, output_tokens, cost_usd, unpriced_calls, errors
FROM sessions
WHERE ($session_id::VARCHAR IS NULL OR session_id = $session_id::VARCHAR)
  AND ($agent::VARCHAR IS NULL OR list_contains(agent_names, $agent::VARCHAR))
ORDER BY last_end DESC NULLS LAST, session_id
LIMIT $limit
"""


def sessions_table(src: Source, session_id: str | None = None, agent: str | None = None, limit: int = 50) -> Table:
    """Conversations, most recent first."""
    return src.table(SESSIONS_SQL, {"session_id": session_id, "agent": agent, "limit": limit}, max_rows=limit)


def session_runs(src: Source, session_id: str, limit: int = 50) -> Table:
    """The runs of one conversation, in start order."""
    sql = (
        "SELECT run_id, workflow_name, agent_name, status, start_time, duration_ms, cost_usd, unpriced_calls, "
        "errors FROM runs WHERE session_id = $session_id ORDER BY start_time, run_id LIMIT $limit"
    )
    return src.table(sql, {"session_id": session_id, "limit": limit}, max_rows=limit)


def evaluations_table(src: Source, run_id: str | None = None, limit: int = 50) -> Table:
    """Evaluation results (``gen_ai.evaluation.result``), newest first; ``run_id``: of that run only."""
    sql = (
        "SELECT * FROM evaluations WHERE $run_id::VARCHAR IS NULL OR run_id = $run_id::VARCHAR "
        "ORDER BY time DESC LIMIT $limit"
    )
    return src.table(sql, {"run_id": run_id, "limit": limit}, max_rows=limit)
