-- run_scope: read one run's raw rows once and classify them once per Run page (console/pages/run.py). The run is
-- getvariable('console_run_id') (set by Queries.scope). DuckDB looks names up in the temp catalog first, so
-- the temporary tables and macros below, of the same names as the views' inputs, are what the views'
-- definitions (unchanged) read on this cursor afterwards:
--   * oa_scoped_spans: the raw spans of the run's traces (the views' own oa_scoped_spans, copied), so the
--     classification and the proxy macros (run_metrics_for_run) read 2,000 rows, not the spans table;
--   * span_events, logs: the rows of those traces (and the log records without a span id from an hour before
--     the run's first span ended to an hour after its last, which the classification may match to a call by its
--     gen_ai.response.id), so run_timeline_for_run, the proxy
--     macros and the classification no longer read every fallback or exception event of the store (a scan
--     that grows with the store: ~45 ms per page on 1 M spans);
--   * oa_classified (what runs_for_run and run_metrics_for_run price without the step placement),
--     oa_classified_spans_for_run (the internal form classified_spans_for_run flattens) and oa_priced: the run
--     classified, placed and priced once instead of once per query.
-- Then one of two tails (read/runs.py scope_run): run_scope_kept.sql when the receiver's maintained state holds the
-- run as its rows are now (run_settled.sql), which reads its row and metrics from that state, or
-- run_scope_computed.sql, which rolls them up from the priced copy.
-- DuckDB plans a table macro on every call (a prepared statement is planned again too) and planning the
-- classification pipeline is most of a run page's cost (bench/console.py --breakdown), so each copy also saves
-- a plan. The temporary objects belong to this cursor (a new connection per page job) and go with it; they
-- ignore their rid argument, and the copies hold this run's traces only, so only queries about this run may
-- run on the cursor after this (handoff_links.sql reads other traces' spans through span_links and spans,
-- neither of which is replaced).
CREATE TEMP TABLE console_run_raw AS SELECT * FROM oa_scoped_spans(getvariable('console_run_id'));
CREATE TEMP MACRO oa_scoped_spans(rid) AS TABLE SELECT * FROM temp.main.console_run_raw;
CREATE TEMP TABLE span_events AS
SELECT * FROM span_events WHERE trace_id IN (SELECT trace_id FROM temp.main.console_run_raw);
CREATE TEMP TABLE logs AS
SELECT * FROM logs
WHERE trace_id IN (SELECT trace_id FROM temp.main.console_run_raw)
   -- a record without span context names a call by response id only if the call ended within an hour of it
   -- (views/runs/030_classified.sql): the records of that time, not every one in the store
   OR (oa_text(span_id) IS NULL
       AND oa_log_time(time, observed_time)
           BETWEEN (SELECT min(end_time) FROM temp.main.console_run_raw) - INTERVAL 1 HOUR
               AND (SELECT max(end_time) FROM temp.main.console_run_raw) + INTERVAL 1 HOUR);
CREATE TEMP TABLE console_run_spans_classified AS SELECT * FROM oa_classified(getvariable('console_run_id'));
CREATE TEMP MACRO oa_classified(rid) AS TABLE SELECT * FROM temp.main.console_run_spans_classified;
CREATE TEMP TABLE console_run_classified AS
SELECT * FROM oa_classified_spans_for_run(getvariable('console_run_id'));
CREATE TEMP MACRO oa_classified_spans_for_run(rid) AS TABLE SELECT * FROM temp.main.console_run_classified;
CREATE TEMP TABLE console_run_priced AS SELECT * FROM oa_priced(getvariable('console_run_id'));
CREATE TEMP MACRO oa_priced(rid) AS TABLE SELECT * FROM temp.main.console_run_priced;
