-- context_compressions: compressions of the snapshots shown ($snapshot_ids).
SELECT snapshot_id, compression_id, block_id, block_type, method, original_tokens, compressed_tokens, saved_tokens,
       compressed_at
FROM context_compressions
WHERE snapshot_id IN (SELECT unnest($snapshot_ids::VARCHAR[]))
ORDER BY compressed_at, compression_id
LIMIT 500
