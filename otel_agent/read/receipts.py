"""Handoff receipts, in one place: the state names and their order (problems first), the windows and their one
conversion to SQL intervals, and the queries of ``otel-agent receipts``, the console's Handoffs page, the demo's
summary and MCP — so every face says the same state by the same rules (``receipt_state_at``,
``receipt_attempts_at``, ``receipt_recoveries_at``: docs/views-evidence.md "Handoff receipts").
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from otel_agent.read.source import Source, Table

STATES = ("uncertain", "orphaned", "stuck", "outcome_failed", "waiting", "working", "verified")
"""Every state, problems first: the one order of every list and group."""
ACK_WINDOW_S = 120.0
PROGRESS_WINDOW_S = 900.0
VERIFICATION_WINDOW_S = 120.0  # as the acknowledgement window: seed 002 names no other number (docs)
MAX_WINDOW_S = 30 * 86400


@dataclass(frozen=True)
class Windows:
    """How long an operation may take for each step before it is a problem, in seconds."""

    ack_s: float = ACK_WINDOW_S
    progress_s: float = PROGRESS_WINDOW_S
    verification_s: float = VERIFICATION_WINDOW_S

    def params(self) -> dict[str, float]:
        return {"ack_s": float(self.ack_s), "progress_s": float(self.progress_s),
                "verification_s": float(self.verification_s)}  # fmt: skip


# The one conversion of the windows: seconds (DOUBLE) → INTERVAL, microsecond precision.
WINDOW_ARGS = """
    ack_window := to_microseconds(CAST($ack_s * 1e6 AS BIGINT)),
    progress_window := to_microseconds(CAST($progress_s * 1e6 AS BIGINT)),
    verification_window := to_microseconds(CAST($verification_s * 1e6 AS BIGINT))"""
AS_OF = "coalesce(CAST($as_of AS TIMESTAMP), timezone('UTC', now()))"
STATE_ORDER = "CASE state " + " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(STATES)) + " ELSE 99 END"

RECEIPTS_SQL = f"""
SELECT operation_id, state, why, waiting_for, ack_latency_s, attempts, current_handoff_id AS handoff_id,
       expected_artifact, delegator, acceptors, last_transition_at
FROM receipt_state_at({AS_OF},{WINDOW_ARGS})
WHERE $state::VARCHAR IS NULL OR state = $state::VARCHAR
ORDER BY {STATE_ORDER}, last_transition_at DESC, operation_id
LIMIT $limit
"""

ATTEMPTS_SQL = f"""
SELECT operation_id, handoff_id, state, why, waiting_for, ack_latency_s, expected_artifact, delegator, acceptors,
       delegated_at, last_transition_at
FROM receipt_attempts_at({AS_OF},{WINDOW_ARGS})
WHERE $state::VARCHAR IS NULL OR state = $state::VARCHAR
ORDER BY operation_id, delegated_at NULLS FIRST, handoff_id
LIMIT $limit
"""

# Recoveries per operation (receipt_recoveries_at), next to the operation's receipt state as of the same time.
RECOVERIES_SQL = f"""
SELECT r.operation_id, s.state AS receipt_state, r.recovery_id, r.status, r.limit_exceeded, r.exceeded_limits,
       r.mode, r.authority, r.action, r.trigger, r.attempts, r.max_attempts, r.cost_usd, r.max_cost_usd,
       r.time_limit_s, r.success_evidence, r.evidence_ref, r.started_at, r.last_transition_at
FROM receipt_recoveries_at({AS_OF}) r
LEFT JOIN receipt_state_at({AS_OF},{WINDOW_ARGS}) s USING (operation_id)
WHERE $state::VARCHAR IS NULL OR s.state = $state::VARCHAR
ORDER BY r.limit_exceeded DESC, r.operation_id, r.started_at, r.recovery_id
LIMIT $limit
"""

KINDS = {"operations": RECEIPTS_SQL, "attempts": ATTEMPTS_SQL, "recoveries": RECOVERIES_SQL}


def receipts_table(
    src: Source, *, kind: str = "operations", as_of: Any = None, windows: Windows = Windows(),
    state: str | None = None, limit: int = 1_000_000, max_rows: int = 10_000,
) -> Table:  # fmt: skip
    """Operations (or their attempts, or their recoveries) with their state as of ``as_of`` (None: now, UTC),
    problems first; ``state`` filters (for recoveries: the operation's state)."""
    params = {"as_of": as_of, "state": state, "limit": limit, **windows.params()}
    return src.table(KINDS[kind], params, max_rows=max_rows)


@dataclass
class ReceiptGroups:
    """The Handoffs page: operations by state in ``STATES`` order (at most ``per_state`` each), how many each
    state holds, and the traces of each operation."""

    as_of: _dt.datetime
    windows: Windows
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)


# The Handoffs page: at most $limit operations per state, newest activity first, with each state's count.
BY_STATE_SQL = f"""
SELECT * FROM (
    SELECT *, row_number() OVER (PARTITION BY state ORDER BY last_transition_at DESC, operation_id) AS rank_in_state,
           count(*) OVER (PARTITION BY state) AS in_state
    FROM receipt_state_at({AS_OF},{WINDOW_ARGS})
)
WHERE rank_in_state <= $limit
ORDER BY {STATE_ORDER}, rank_in_state
"""


def receipts_by_state(src: Source, as_of: _dt.datetime, windows: Windows, per_state: int = 100) -> ReceiptGroups:
    rows = src.rows(BY_STATE_SQL, {"as_of": as_of, "limit": per_state, **windows.params()})
    ids = [r["operation_id"] for r in rows]
    traces = {t["operation_id"]: t for t in src.rows("receipts_traces", {"operation_ids": ids})} if rows else {}
    out = ReceiptGroups(as_of, windows)
    for r in rows:
        last = r.get("last_transition_at")
        r["age_s"] = (as_of - last).total_seconds() if isinstance(last, _dt.datetime) else None
        r["traces"] = traces.get(r["operation_id"], {})
        out.groups.setdefault(r["state"], []).append(r)
        out.totals[r["state"]] = int(r["in_state"])
    out.order = [s for s in STATES if s in out.groups] + sorted(s for s in out.groups if s not in STATES)
    return out
