-- run_spans: the spans of run $run_id for a tree and waterfall (console/tree.py), classified and priced
-- (oa_priced), in start order, at most $limit (the page offers "show more"); record_id from the raw row.
-- The Run page (console/pages/run.py) reads every span of the run ($trace_id NULL); the Trace page
-- (console/pages/trace.py) the spans of one trace ($trace_id) that belong to the run, once per run found in the
-- trace (trace_runs.sql; a third-party trace of no run of ours is the run named by its trace id).
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
WHERE p.run_id = $run_id AND ($trace_id IS NULL OR p.trace_id = $trace_id)
ORDER BY p.start_time, p.end_time DESC, p.span_id
LIMIT $limit
