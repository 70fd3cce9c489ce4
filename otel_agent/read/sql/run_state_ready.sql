-- run_state_ready: whether the store's runs view reads the maintained state (store/maintained.py
-- reads_maintained_runs): only then does run_settled.sql name its tables.
SELECT count(*) > 0 AS ready
FROM duckdb_views()
WHERE view_name = 'runs' AND database_name = current_database() AND sql LIKE '%run_summary%'
