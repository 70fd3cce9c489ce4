-- run_spans: every span of a run as `otel-agent run RUN_ID` draws it — the classified span (hierarchy,
-- normalised fields) with its cost, its OTLP status message and, for our records, the record's own id
-- (`spans.record_id`, promoted at ingest). A public view so the CLI (and anyone drawing a run) reads a
-- documented contract, not the internal oa_priced.
CREATE OR REPLACE MACRO run_spans_for_run(rid) AS TABLE
WITH p AS MATERIALIZED (
    SELECT * FROM oa_priced(rid)
),
ids AS (
    SELECT s.trace_id, s.span_id, any_value(s.record_id) AS record_id
    FROM spans AS s
    SEMI JOIN p ON p.trace_id = s.trace_id AND p.span_id = s.span_id
    WHERE s.record_id IS NOT NULL
    GROUP BY ALL
)
SELECT
    p.run_id, p.trace_id, p.span_id, p.parent_span_id, p.span_name, p.category, p.record_kind, ids.record_id,
    p.start_time, p.end_time, p.duration_ms, p.status_code, p.status_message, p.is_error, p.error_type,
    p.workflow_name, p.agent_name, p.step_id, p.step_name, p.skill_name, p.skill_version,
    p.provider, p.request_model, p.response_model, p.input_tokens, p.output_tokens, p.cache_read_tokens,
    p.cost_usd, p.cost_source, p.cost_missing_reason,
    p.retry_count, p.fallback_count, p.fallback_from_provider, p.fallback_from_model, p.nested_call,
    p.tool_name, p.tool_provider,
    p.guard_name, p.guard_outcome, p.guard_reason,
    p.verifier_name, p.verifier_outcome, p.verifier_score, p.verifier_reason,
    p.receipt_transition, p.handoff_to, p.handoff_from,
    p.artifact_id, p.artifact_version_number
FROM p
LEFT JOIN ids ON ids.trace_id = p.trace_id AND ids.span_id = p.span_id;

CREATE OR REPLACE VIEW run_spans AS SELECT * FROM run_spans_for_run(NULL);
