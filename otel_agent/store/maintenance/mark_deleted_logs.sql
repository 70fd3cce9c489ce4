-- Retention (lifecycle/retention.py), in the transaction that deletes the log records it registered as lc_keys
-- (lc_rowid and the keys time, content_hash; getvariable('oa_lo_rowid') / ('oa_hi_rowid') their rowid range),
-- before the DELETE: mark the traces whose run rows the deletion changes, for the maintained state to fold again
-- (store/maintained.py). A log record names its trace, or, with no span context, the provider calls it matches by
-- response id (views/runs/030_classified.sql: calls that ended within an hour of it).
INSERT INTO dirty_traces
SELECT DISTINCT hash(trace_id), trace_id
FROM (
    SELECT l.trace_id FROM logs AS l
    WHERE l.rowid BETWEEN getvariable('oa_lo_rowid') AND getvariable('oa_hi_rowid')
      AND l.rowid IN (SELECT lc_rowid FROM lc_keys)
      AND nullif(l.trace_id, '') IS NOT NULL
    UNION ALL
    SELECT s.trace_id
    FROM logs AS l
    JOIN spans AS s
      ON s.end_time BETWEEN oa_log_time(l.time, l.observed_time) - INTERVAL 1 HOUR
                        AND oa_log_time(l.time, l.observed_time) + INTERVAL 1 HOUR
     AND s.attributes->>'gen_ai.response.id' = l.attributes->>'gen_ai.response.id'
    WHERE l.rowid BETWEEN getvariable('oa_lo_rowid') AND getvariable('oa_hi_rowid')
      AND l.rowid IN (SELECT lc_rowid FROM lc_keys)
      AND l.event_name = 'gen_ai.client.operation.exception' AND nullif(l.span_id, '') IS NULL
      AND s.end_time BETWEEN (SELECT min(oa_log_time(time, observed_time)) FROM logs
                              WHERE rowid BETWEEN getvariable('oa_lo_rowid') AND getvariable('oa_hi_rowid'))
                             - INTERVAL 1 HOUR
                         AND (SELECT max(oa_log_time(time, observed_time)) FROM logs
                              WHERE rowid BETWEEN getvariable('oa_lo_rowid') AND getvariable('oa_hi_rowid'))
                             + INTERVAL 1 HOUR
);
