-- Forget the maintained state (store/maintained.py rebuilds it from raw; the runs view reads raw meanwhile).
CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL);
DROP TABLE IF EXISTS trace_commits;
DROP TABLE IF EXISTS run_traces;
DROP TABLE IF EXISTS dirty_traces;
DROP TABLE IF EXISTS run_summary;
