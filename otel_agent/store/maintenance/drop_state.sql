-- Forget the maintained state (store/maintained.py rebuilds it from raw; the runs view and oa_scoped_spans read
-- raw meanwhile: their query-time definitions, views/runs/080_runs.sql and 020_span_fields.sql, applied again by
-- the caller).
CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL);
DROP TABLE IF EXISTS trace_commits;
DROP TABLE IF EXISTS run_traces;
DROP TABLE IF EXISTS dirty_traces;
DROP TABLE IF EXISTS run_summary;
