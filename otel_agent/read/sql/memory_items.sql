-- memory_items: active memory (approved proposals), at most 500, by type then approval time.
SELECT memory_id, memory_type, content, summary, scopes, source_run_id, approved_by, approved_at, approval_reason
FROM memory_items
ORDER BY memory_type, approved_at DESC, memory_id
LIMIT 500
