-- memory_proposals: proposals, pending first then newest (console/pages/memory.py); $status filters.
SELECT * FROM memory_proposals
WHERE ($status IS NULL OR status = $status)
ORDER BY status <> 'pending', proposed_at DESC, proposal_id
LIMIT $limit OFFSET $offset
