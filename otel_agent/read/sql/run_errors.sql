-- run_errors: a run's spans in error (classified_spans_for_run, docs/views-runs.md "Errors"), origins first
-- (is_error_origin: in error, and no child in error), then by start time; at most $limit.
SELECT trace_id, span_id, parent_span_id, span_name, category, is_error_origin, error_type, error_message,
       status_message, step_name, agent_name, provider, request_model, tool_name, start_time, duration_ms
FROM classified_spans_for_run($run_id)
WHERE is_error
ORDER BY is_error_origin DESC, start_time, span_id
LIMIT $limit
