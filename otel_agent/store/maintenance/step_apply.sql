-- Step 3 (store/maintained.py), after step_scope over every trace of the runs in _m_runs_touched: replace those
-- runs' rows by what the runs view's own SQL computes over them (a run no span holds any more goes), and the
-- dirty traces' run memberships.
CREATE OR REPLACE TEMP TABLE _m_rows AS
    SELECT hash(run_id) AS run_h, * FROM oa_run_rows('_m_cls')
    WHERE run_id IN (SELECT run_id FROM _m_runs_touched);

DELETE FROM run_summary
WHERE run_h IN (SELECT run_h FROM _m_runs_touched) AND run_id IN (SELECT run_id FROM _m_runs_touched);

INSERT INTO run_summary BY NAME SELECT * FROM _m_rows;

-- their proxy_* metric rows (written again by step_proxy.sql, when the scope may hold proxy requests)
DELETE FROM run_proxy_metrics
WHERE run_h IN (SELECT run_h FROM _m_runs_touched) AND run_id IN (SELECT run_id FROM _m_runs_touched);

DELETE FROM run_traces
WHERE h IN (SELECT h FROM _m_dirty) AND trace_id IN (SELECT trace_id FROM _m_dirty);

INSERT INTO run_traces
    SELECT DISTINCT hash(run_id), run_id, hash(trace_id), trace_id
    FROM _m_cls
    WHERE trace_id IN (SELECT trace_id FROM _m_dirty);

-- the health facts of every trace in scope (each fact depends on its own trace only)
DELETE FROM health_facts
WHERE h IN (SELECT h FROM _m_scope_traces) AND trace_id IN (SELECT trace_id FROM _m_scope_traces);

INSERT INTO health_facts BY NAME SELECT hash(trace_id) AS h, * EXCLUDE (span_id, event_index) FROM oa_health_facts_computed();

-- and their proxy facts (computed by step_proxy.sql, when the scope has spans that may be proxy requests) and
-- receipt candidates
DELETE FROM proxy_facts
WHERE h IN (SELECT h FROM _m_scope_traces) AND trace_id IN (SELECT trace_id FROM _m_scope_traces);

DELETE FROM receipt_candidates
WHERE h IN (SELECT h FROM _m_scope_traces) AND trace_id IN (SELECT trace_id FROM _m_scope_traces);

INSERT INTO receipt_candidates SELECT hash(trace_id), * FROM oa_receipt_candidates_computed();

-- a trace retention emptied: forget its commits too
DELETE FROM trace_commits
WHERE h IN (
    SELECT h FROM _m_dirty
    WHERE trace_id NOT IN (SELECT trace_id FROM spans UNION SELECT trace_id FROM span_events
                           UNION SELECT trace_id FROM logs WHERE trace_id IS NOT NULL)
);
