-- trace_spans: the spans of one trace ($trace_id) that belong to run $run_id, classified and priced as the run
-- views do (oa_priced; a third-party trace of no run of ours is the run named by its trace id). The Trace page
-- (console/pages/trace.py) asks once per run found in the trace (trace_runs.sql).
SELECT p.trace_id, p.span_id, p.parent_span_id, p.span_name, p.category, p.record_kind, s.record_id,
       epoch_ns(p.start_time) AS start_ns, epoch_ns(p.end_time) AS end_ns, p.duration_ms, p.status_code,
       p.is_error, p.error_type, p.service_name, p.workflow_name, p.agent_name, p.step_name, p.skill_name,
       p.skill_version, p.provider, p.request_model, p.response_model, p.input_tokens, p.output_tokens, p.cost_usd,
       p.cost_missing_reason, p.retry_count, p.fallback_count, p.fallback_from_provider, p.fallback_from_model,
       p.nested_call, p.tool_name, p.tool_provider, p.guard_name, p.guard_outcome, p.guard_reason, p.verifier_name,
       p.verifier_outcome, p.verifier_score, p.receipt_transition, p.handoff_to, p.artifact_id,
       p.artifact_version_number, p.run_id
FROM oa_priced($run_id) p
LEFT JOIN spans s ON s.trace_id = p.trace_id AND s.span_id = p.span_id AND s.end_time = p.end_time
WHERE p.trace_id = $trace_id
ORDER BY p.start_time, p.end_time DESC, p.span_id
LIMIT $limit
