"""The handoff-receipt queries, in one place: ``otel-agent receipts`` and the demo's summary both read them,
so both say the same state names by the same rules (receipt_state_at / receipt_attempts_at,
docs/views-evidence.md)."""

from __future__ import annotations

STATES = ("verified", "orphaned", "working", "waiting", "stuck", "outcome_failed", "uncertain")
ACK_WINDOW_S = 120.0
PROGRESS_WINDOW_S = 900.0
VERIFICATION_WINDOW_S = 120.0  # as the acknowledgement window: seed 002 names no other number (docs)

_WINDOWS = """
    coalesce(CAST(? AS TIMESTAMP), timezone('UTC', now())),
    ack_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    progress_window := to_microseconds(CAST(? * 1e6 AS BIGINT)),
    verification_window := to_microseconds(CAST(? * 1e6 AS BIGINT)))"""

RECEIPTS_SQL = f"""
SELECT operation_id, state, why, waiting_for, ack_latency_s, attempts, current_handoff_id AS handoff_id,
       expected_artifact, delegator, acceptors, last_transition_at
FROM receipt_state_at({_WINDOWS}
WHERE ? IS NULL OR state = ?
ORDER BY CASE state WHEN 'uncertain' THEN 0 WHEN 'orphaned' THEN 1 WHEN 'stuck' THEN 2 WHEN 'outcome_failed' THEN 3
                    WHEN 'waiting' THEN 4 WHEN 'working' THEN 5 ELSE 6 END,
         last_transition_at DESC, operation_id
"""

ATTEMPTS_SQL = f"""
SELECT operation_id, handoff_id, state, why, waiting_for, ack_latency_s, expected_artifact, delegator, acceptors,
       delegated_at, last_transition_at
FROM receipt_attempts_at({_WINDOWS}
WHERE ? IS NULL OR state = ?
ORDER BY operation_id, delegated_at NULLS FIRST, handoff_id
"""

# Recoveries per operation (receipt_recoveries_at), next to the operation's receipt state as of the same time.
RECOVERIES_SQL = f"""
SELECT r.operation_id, s.state AS receipt_state, r.recovery_id, r.status, r.limit_exceeded, r.exceeded_limits,
       r.mode, r.authority, r.action, r.trigger, r.attempts, r.max_attempts, r.cost_usd, r.max_cost_usd,
       r.time_limit_s, r.success_evidence, r.evidence_ref, r.started_at, r.last_transition_at
FROM receipt_recoveries_at(coalesce(CAST(? AS TIMESTAMP), timezone('UTC', now()))) r
LEFT JOIN receipt_state_at({_WINDOWS} s USING (operation_id)
WHERE ? IS NULL OR s.state = ?
ORDER BY r.limit_exceeded DESC, r.operation_id, r.started_at, r.recovery_id
"""


def receipt_params(
    as_of: str | None = None,
    ack_window_s: float = ACK_WINDOW_S,
    progress_window_s: float = PROGRESS_WINDOW_S,
    verification_window_s: float = VERIFICATION_WINDOW_S,
    state: str | None = None,
) -> list[object]:
    """The parameters of RECEIPTS_SQL / ATTEMPTS_SQL (``as_of`` None: now, in UTC)."""
    return [as_of, ack_window_s, progress_window_s, verification_window_s, state, state]
