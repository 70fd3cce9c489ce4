-- Step 2 (store/maintained.py): the raw rows of the traces in _m_scope_traces, as TEMP tables named like the raw
-- tables: on the writer's connection they shadow them, so the run views' own SQL (views/runs/) reads only these
-- traces. A trace's rows are found through its commits (trace_commits): zone maps on ingest_seq prune the scan
-- to their row groups. The context-less exception log records within an hour of the scope's spans come too
-- (the classification matches them by response id).
CREATE OR REPLACE TEMP TABLE _m_seqs AS
    SELECT DISTINCT seq FROM trace_commits WHERE h IN (SELECT h FROM _m_scope_traces);

CREATE OR REPLACE TEMP TABLE spans AS
    SELECT * FROM oa_store.spans
    WHERE ingest_seq IN (SELECT seq FROM _m_seqs) AND trace_id IN (SELECT trace_id FROM _m_scope_traces);

CREATE OR REPLACE TEMP TABLE span_events AS
    SELECT * FROM oa_store.span_events
    WHERE ingest_seq IN (SELECT seq FROM _m_seqs) AND trace_id IN (SELECT trace_id FROM _m_scope_traces);

CREATE OR REPLACE TEMP TABLE logs AS
    SELECT * FROM oa_store.logs
    WHERE ingest_seq IN (SELECT seq FROM _m_seqs) AND trace_id IN (SELECT trace_id FROM _m_scope_traces)
    UNION ALL
    SELECT * FROM oa_store.logs
    WHERE event_name = 'gen_ai.client.operation.exception' AND nullif(span_id, '') IS NULL
      AND (SELECT count(*) FROM spans) > 0
      AND oa_log_time(time, observed_time) BETWEEN (SELECT min(end_time) FROM spans) - INTERVAL 1 HOUR
                                                AND (SELECT max(end_time) FROM spans) + INTERVAL 1 HOUR;

-- The scope's normalised rows (every stored version: the JSON parsed and the conventions read once), handed to
-- the classification and to the health facts (step_apply.sql) through a TEMP oa_normalised_all of the same name
-- (DuckDB looks in temp first), with the same latest-version rule as views/runs/020_span_fields.sql (a version is
-- picked on end_time, received_at, which normalising does not change). Dropped first: a second round of this
-- script (runs across traces) normalises its larger scope from raw again.
DROP MACRO TABLE IF EXISTS temp.main.oa_normalised_all;

CREATE OR REPLACE TEMP TABLE _m_norm AS SELECT * FROM oa_normalised_all(NULL);

CREATE TEMP MACRO oa_normalised_all(rid, latest := false) AS TABLE
SELECT * FROM temp.main._m_norm
QUALIFY NOT latest
     OR row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, in_progress, received_at DESC) = 1;

CREATE OR REPLACE TEMP TABLE _m_cls AS SELECT * FROM oa_classified(NULL);
