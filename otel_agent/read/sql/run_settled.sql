-- run_settled: after run_scope.sql, whether the maintained derived state (docs/schema.md, "Maintained derived state")
-- holds run $run_id as its raw rows are now: the store's runs view reads the state (read.runs.reads_maintained,
-- asked first, since without a state there is no run_summary to name), the state has a row
-- for the run, and every raw row the run's views read (the scope's copies) was folded in (ingest_seq at most the
-- watermark). Then its row and metrics are read from the state instead of being rolled up again
-- (run_scope_kept.sql); a run whose spans are still arriving is rolled up from the copies (run_scope_computed.sql).
SELECT EXISTS (SELECT 1 FROM run_summary WHERE run_h = hash($run_id::VARCHAR) AND run_id = $run_id::VARCHAR)
       AND coalesce((SELECT max(ingest_seq) FROM (
               SELECT ingest_seq FROM temp.main.console_run_raw
               UNION ALL SELECT ingest_seq FROM temp.main.span_events
               UNION ALL SELECT ingest_seq FROM temp.main.logs
           )), 0)
           <= (SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 0) FROM otel_agent_meta WHERE key = 'maintained_seq')
       AS settled
