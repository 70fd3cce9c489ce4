-- claim_conflicts: conflicts naming the claim, or evidence it cites ($evidence_ids).
SELECT conflict_id, description, severity, claim_ids, evidence_ids, status, status_by, status_at, status_reason,
       run_id, trace_id, span_id, recorded_at
FROM conflicts
WHERE list_contains(claim_ids, $claim_id) OR len(list_intersect(evidence_ids, $evidence_ids::VARCHAR[])) > 0
ORDER BY recorded_at, conflict_id
LIMIT 100
