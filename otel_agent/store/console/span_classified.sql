-- span_classified: how the run views read one span (category, tokens, cost and its source), for node details;
-- $run_id: the span's run (trace_runs.sql).
SELECT category, convention, operation, run_id, provider, request_model, response_model, input_tokens,
       output_tokens, cache_read_tokens, reasoning_tokens, cost_usd, cost_source, cost_missing_reason,
       retry_count, fallback_count, fallback_from_provider, fallback_from_model, nested_call, error_type, is_error
FROM oa_priced($run_id)
WHERE trace_id = $trace_id AND span_id = $span_id
LIMIT 1
