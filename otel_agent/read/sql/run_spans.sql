-- run_spans: the spans of run $run_id for a tree and waterfall (read/tree.py), from the public run_spans_for_run
-- (docs/views-runs.md) with epoch-ns times, in start order, at most $limit (a page offers "show more"). The Run
-- page and `otel-agent run` read every span of the run ($trace_id NULL); the Trace page the spans of one trace
-- ($trace_id) that belong to the run, once per run found in the trace (trace_runs.sql; a third-party trace of no
-- run of ours is the run named by its trace id).
SELECT *, epoch_ns(start_time) AS start_ns, epoch_ns(end_time) AS end_ns
FROM run_spans_for_run($run_id)
WHERE $trace_id::VARCHAR IS NULL OR trace_id = $trace_id::VARCHAR
ORDER BY start_time, end_time DESC, span_id
LIMIT $limit
