-- Step 1 (store/maintained.py): the traces to fold again — those with rows in the commits (oa_lo, oa_hi], those
-- retention marked, and the traces of provider calls that a context-less exception log record of those commits
-- names by gen_ai.response.id (the classification's rule, views/runs/030_classified.sql: calls that ended
-- within an hour of the record) — and the commits now known for each.
CREATE OR REPLACE TEMP TABLE _m_new AS
    SELECT DISTINCT hash(trace_id) AS h, trace_id, ingest_seq AS seq
    FROM oa_store.spans WHERE ingest_seq > getvariable('oa_lo') AND ingest_seq <= getvariable('oa_hi')
    UNION
    SELECT DISTINCT hash(trace_id), trace_id, ingest_seq
    FROM oa_store.span_events WHERE ingest_seq > getvariable('oa_lo') AND ingest_seq <= getvariable('oa_hi')
    UNION
    SELECT DISTINCT hash(trace_id), trace_id, ingest_seq
    FROM oa_store.logs
    WHERE ingest_seq > getvariable('oa_lo') AND ingest_seq <= getvariable('oa_hi') AND nullif(trace_id, '') IS NOT NULL;

INSERT INTO trace_commits SELECT DISTINCT h, seq FROM _m_new;

CREATE OR REPLACE TEMP TABLE _m_loose_logs AS
    SELECT oa_log_time(time, observed_time) AS time, attributes->>'gen_ai.response.id' AS response_id
    FROM oa_store.logs
    WHERE ingest_seq > getvariable('oa_lo') AND ingest_seq <= getvariable('oa_hi')
      AND event_name = 'gen_ai.client.operation.exception' AND nullif(span_id, '') IS NULL;

CREATE OR REPLACE TEMP TABLE _m_dirty AS
    SELECT DISTINCT h, trace_id FROM (
        SELECT h, trace_id FROM _m_new
        UNION ALL
        SELECT h, trace_id FROM dirty_traces
        UNION ALL
        SELECT hash(s.trace_id), s.trace_id
        FROM oa_store.spans AS s
        JOIN _m_loose_logs AS l
          ON s.end_time BETWEEN l.time - INTERVAL 1 HOUR AND l.time + INTERVAL 1 HOUR
         AND s.attributes->>'gen_ai.response.id' = l.response_id
        WHERE (SELECT count(*) FROM _m_loose_logs) > 0
          AND s.end_time BETWEEN (SELECT min(time) FROM _m_loose_logs) - INTERVAL 1 HOUR
                             AND (SELECT max(time) FROM _m_loose_logs) + INTERVAL 1 HOUR
    );

DELETE FROM dirty_traces;
