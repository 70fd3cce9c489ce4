-- run_scope_kept: run_scope.sql's tail for a run the maintained state holds as it is now (run_settled.sql): the run's
-- row (the Run page's header, run_summary.sql) is its maintained row, and its metrics but for the quality.* rows
-- come from that row and its maintained proxy_* rows (the store's oa_run_metrics_base_for_run reads them so
-- already). Neither is rolled up again: that saves planning the pricing and roll-up SQL twice (~0.1-0.15 s of CPU
-- a page on 2 cores).
CREATE TEMP TABLE console_run_row AS
SELECT * EXCLUDE (run_h) REPLACE (oa_run_status(status, last_activity_time) AS status)
FROM run_summary
WHERE run_h = hash(getvariable('console_run_id')) AND run_id = getvariable('console_run_id');
CREATE TEMP MACRO runs_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_row;
