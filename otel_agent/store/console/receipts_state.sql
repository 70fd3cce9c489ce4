-- receipts_state: handoff operations by operator state as of $as_of with the page's windows (seconds), for the
-- Handoffs page (console/pages/receipts.py); at most $limit rows per state, newest activity first.
SELECT * FROM (
    SELECT *, row_number() OVER (PARTITION BY state ORDER BY last_transition_at DESC, operation_id) AS rank_in_state,
           count(*) OVER (PARTITION BY state) AS in_state
    FROM receipt_state_at(
        $as_of::TIMESTAMP,
        ack_window := to_seconds($ack_s::DOUBLE),
        progress_window := to_seconds($progress_s::DOUBLE),
        verification_window := to_seconds($verification_s::DOUBLE)
    )
)
WHERE rank_in_state <= $limit
ORDER BY state, rank_in_state
