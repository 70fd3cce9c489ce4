-- Decisions (the model's proposal next to the policy gate's effective decision) and badcases
-- (docs/views-evidence.md).

CREATE OR REPLACE VIEW decisions AS
WITH raw AS (
    SELECT attributes->>'otel_agent.decision.id' AS decision_id,
           attributes->>'otel_agent.decision.name' AS name,
           attributes->>'otel_agent.decision.model_decision' AS model_decision,
           attributes->>'otel_agent.decision.model_action' AS model_action,
           attributes->>'otel_agent.decision.effective_decision' AS effective_decision,
           attributes->>'otel_agent.decision.effective_action' AS effective_action,
           attributes->>'otel_agent.decision.expected_action' AS expected_action,
           TRY_CAST(attributes->>'otel_agent.decision.policy_passed' AS BOOLEAN) AS policy_passed,
           TRY_CAST(attributes->>'otel_agent.decision.mismatch' AS BOOLEAN) AS emitted_mismatch,
           TRY_CAST(attributes->>'otel_agent.decision.review_required' AS BOOLEAN) AS review_required,
           attributes->>'otel_agent.decision.reason' AS reason,
           coalesce(TRY_CAST(attributes->'otel_agent.decision.evidence_refs' AS VARCHAR[]), []::VARCHAR[])
               AS evidence_refs,
           TRY_CAST(attributes->>'otel_agent.iteration' AS BIGINT) AS iteration,
           attributes->>'otel_agent.run.id' AS run_id,
           attributes->>'otel_agent.step.id' AS step_id,
           trace_id, span_id, service_name,
           start_time AS decided_at
    FROM spans
    WHERE name = 'otel_agent.decision' AND attributes->>'otel_agent.record.kind' = 'decision'
      AND (attributes->>'otel_agent.decision.id') IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY decision_id ORDER BY decided_at, trace_id, span_id) = 1
)
SELECT decision_id, name, model_decision, model_action, effective_decision, effective_action, expected_action,
       policy_passed,
       model_decision IS DISTINCT FROM effective_decision
           OR (model_action IS NOT NULL AND effective_action IS NOT NULL AND model_action <> effective_action)
           AS mismatch,
       emitted_mismatch,
       coalesce(review_required, model_decision IS DISTINCT FROM effective_decision) AS review_required,
       reason, evidence_refs, iteration, run_id, step_id, trace_id, span_id, service_name, raw.decided_at,
       -- the human's answer to a human_review decision (reviews of kind 'decision', append-only; issue 15)
       CASE r.status WHEN 'approved' THEN 'approve' WHEN 'rejected' THEN 'reject' END AS human_verdict,
       r.decided_by AS human_reviewer,
       r.decided_at AS human_reviewed_at,
       r.decision_reason AS human_reason,
       coalesce(r.annotations, 0) AS human_annotations
FROM raw
LEFT JOIN review_status r ON r.target_kind = 'decision' AND r.target_id = raw.decision_id;

CREATE OR REPLACE VIEW badcases AS
SELECT attributes->>'otel_agent.badcase.id' AS badcase_id,
       attributes->>'otel_agent.badcase.stage' AS stage,
       attributes->>'otel_agent.badcase.error_type' AS error_type,
       attributes->>'otel_agent.badcase.message' AS message,
       attributes->>'otel_agent.badcase.provider' AS provider,
       attributes->>'otel_agent.badcase.model' AS model,
       attributes->>'otel_agent.badcase.raw_model_output' AS raw_model_output,
       coalesce(TRY_CAST(attributes->>'otel_agent.badcase.raw_model_output_truncated' AS BOOLEAN), false)
           AS raw_model_output_truncated,
       coalesce(TRY_CAST(attributes->>'otel_agent.badcase.raw_model_output_bytes' AS BIGINT),
                octet_length(encode(attributes->>'otel_agent.badcase.raw_model_output'))) AS raw_model_output_bytes,
       attributes->>'otel_agent.run.id' AS run_id,
       TRY_CAST(attributes->>'otel_agent.iteration' AS BIGINT) AS iteration,
       attributes->>'otel_agent.step.id' AS step_id,
       trace_id, span_id, service_name,
       start_time AS recorded_at
FROM spans
WHERE name = 'otel_agent.badcase' AND attributes->>'otel_agent.record.kind' = 'badcase'
  AND (attributes->>'otel_agent.badcase.id') IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY badcase_id ORDER BY recorded_at, trace_id, span_id) = 1;
