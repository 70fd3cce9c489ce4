-- run_scope: classify one run's spans once per Run page (console/pages/run.py). The run is
-- getvariable('console_run_id') (set by Queries.scope). Its classified spans (oa_classified_spans_for_run,
-- the internal form every per-run layer reads; classified_spans_for_run flattens it) and its priced spans
-- (oa_priced) are copied into this cursor's temporary tables, and temporary macros of the same names read
-- them instead. DuckDB looks names up in the temp catalog first, so classified_spans_for_run, runs_for_run,
-- run_metrics_for_run, cost_breakdown_for_run, run_timeline_for_run and run_spans.sql then read the copy:
-- the views' definitions, unchanged, over one classification instead of one each. The run's row
-- (runs_for_run: the header, run_summary.sql) is kept the same way, for run_metrics_for_run, which derives it
-- again otherwise. DuckDB plans a table macro on every call and planning the classification pipeline is most
-- of a run page's cost (bench/console.py --breakdown), so each copy also saves a plan.
-- The temporary objects belong to this cursor (a new connection per page job) and go with it; they ignore
-- their rid argument, so only queries about this run may run on the cursor after this.
CREATE TEMP TABLE console_run_classified AS
SELECT * FROM oa_classified_spans_for_run(getvariable('console_run_id'));
CREATE TEMP MACRO oa_classified_spans_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_classified;
CREATE TEMP TABLE console_run_priced AS SELECT * FROM oa_priced(getvariable('console_run_id'));
CREATE TEMP MACRO oa_priced(rid) AS TABLE SELECT * FROM temp.main.console_run_priced;
CREATE TEMP TABLE console_run_row AS SELECT * FROM runs_for_run(getvariable('console_run_id'));
CREATE TEMP MACRO runs_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_row;
