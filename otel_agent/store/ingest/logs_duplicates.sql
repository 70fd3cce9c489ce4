-- How many log records are already stored, by (time, content_hash).
SELECT count(*) AS stored FROM logs l SEMI JOIN incoming_logs b USING (time, content_hash);
