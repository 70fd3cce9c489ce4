-- The runs view over the maintained rows (store/maintained.py installs it once the state has caught up with the
-- store; until then, and over shards or an archive, runs is runs_for_run(NULL), views/runs/080_runs.sql).
CREATE OR REPLACE VIEW runs AS SELECT * EXCLUDE (run_h) FROM run_summary;
