-- context_snapshots: one page of context snapshots (console/pages/context.py), newest first.
SELECT * FROM context_snapshots
WHERE ($run_id IS NULL OR run_id = $run_id)
ORDER BY recorded_at DESC, snapshot_id
LIMIT $limit OFFSET $offset
