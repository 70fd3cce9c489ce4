-- run_scope_computed: run_scope.sql's tail for a run the maintained state does not hold as it is now (no state, or
-- rows of the run not folded yet: run_settled.sql): its row from the priced copy (runs_for_run itself would classify
-- the run again: it reads oa_classified), and its metrics computed from the copies, not read from a state that
-- lags them.
CREATE TEMP TABLE console_run_row AS
SELECT * REPLACE (oa_run_status(status, last_activity_time) AS status) FROM oa_runs_in('console_run_priced');
CREATE TEMP MACRO runs_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_row;
CREATE TEMP MACRO oa_run_metrics_base_for_run(rid) AS TABLE SELECT * FROM oa_run_metrics_base_computed(rid);
