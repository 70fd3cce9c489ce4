-- context_allocations: budget vs used per block type of the snapshots shown ($snapshot_ids).
SELECT snapshot_id, block_type, share, budget_tokens, used_tokens
FROM context_allocations
WHERE snapshot_id IN (SELECT unnest($snapshot_ids::VARCHAR[]))
ORDER BY snapshot_id, budget_tokens DESC, block_type
