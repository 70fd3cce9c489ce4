-- receipts_traces: where each operation's delegation and acceptance were recorded ($operation_ids), so the
-- Handoffs page links both traces.
SELECT operation_id,
       arg_min(trace_id, time) FILTER (WHERE transition = 'delegated') AS delegator_trace_id,
       arg_min(span_id, time) FILTER (WHERE transition = 'delegated') AS delegator_span_id,
       arg_min(run_id, time) FILTER (WHERE transition = 'delegated') AS delegator_run_id,
       arg_min(trace_id, time) FILTER (WHERE transition = 'accepted') AS worker_trace_id,
       arg_min(span_id, time) FILTER (WHERE transition = 'accepted') AS worker_span_id,
       arg_min(run_id, time) FILTER (WHERE transition = 'accepted') AS worker_run_id
FROM receipt_transitions
WHERE operation_id IN (SELECT unnest($operation_ids::VARCHAR[]))
GROUP BY operation_id
