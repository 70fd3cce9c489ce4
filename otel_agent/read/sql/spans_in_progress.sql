-- spans_in_progress: the spans of run $run_id in progress (announced by a pending span and not ended yet:
-- classified_spans.in_progress, docs/views-runs.md "Runs in progress"), of trace $trace_id only unless NULL. The
-- Run and Trace pages draw them as open bars (console/tree.py). On a Run page's cursor the run's scope
-- (run_scope.sql) makes this a read of the run's classified copy.
SELECT trace_id, span_id
FROM classified_spans_for_run($run_id)
WHERE in_progress AND ($trace_id::VARCHAR IS NULL OR trace_id = $trace_id::VARCHAR)
