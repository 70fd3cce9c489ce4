-- run_scope: classify one run's spans once per Run page (console/pages/run.py). The run is
-- getvariable('console_run_id') (set by Queries.scope). Its classified and its priced spans are copied into
-- this cursor's temporary tables, and temporary macros of the same names as the views' per-run macros
-- (classified_spans_for_run, oa_priced) read them instead. DuckDB looks names up in the temp catalog first,
-- so runs_for_run, run_metrics_for_run, cost_breakdown_for_run, run_timeline_for_run and run_spans.sql then
-- read the copy: the same view definitions, unchanged, over one classification instead of one each.
-- The temporary objects belong to this cursor (a new connection per page job) and go with it; they ignore
-- their rid argument, so only queries about this run may run on the cursor after this.
CREATE TEMP TABLE console_run_classified AS
SELECT * FROM classified_spans_for_run(getvariable('console_run_id'));
CREATE TEMP MACRO classified_spans_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_classified;
CREATE TEMP TABLE console_run_priced AS SELECT * FROM oa_priced(getvariable('console_run_id'));
CREATE TEMP MACRO oa_priced(rid) AS TABLE SELECT * FROM temp.main.console_run_priced;
