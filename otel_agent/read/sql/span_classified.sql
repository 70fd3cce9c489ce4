-- span_classified: how the run views read one span (category, tokens, cost and its source), for node details;
-- $run_id: the span's run (trace_runs.sql). classified_spans_for_run and run_spans_for_run (docs/views-runs.md).
SELECT c.category, c.convention, c.operation, c.run_id, c.provider, c.request_model, c.response_model,
       c.input_tokens, c.output_tokens, c.cache_read_tokens, c.reasoning_tokens, r.cost_usd, r.cost_source,
       r.cost_missing_reason, c.retry_count, c.fallback_count, c.fallback_from_provider, c.fallback_from_model,
       c.nested_call, c.error_type, c.is_error
FROM classified_spans_for_run($run_id) c
LEFT JOIN run_spans_for_run($run_id) r ON r.trace_id = c.trace_id AND r.span_id = c.span_id
WHERE c.trace_id = $trace_id AND c.span_id = $span_id
LIMIT 1
