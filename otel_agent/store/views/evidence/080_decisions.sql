-- Decisions (the model's proposal next to the policy gate's effective decision) and badcases
-- (docs/views-evidence.md).

CREATE OR REPLACE VIEW decisions AS
WITH raw AS (
    SELECT a['otel_agent.decision.id'] AS decision_id,
           a['otel_agent.decision.name'] AS name,
           a['otel_agent.decision.model_decision'] AS model_decision,
           a['otel_agent.decision.model_action'] AS model_action,
           a['otel_agent.decision.effective_decision'] AS effective_decision,
           a['otel_agent.decision.effective_action'] AS effective_action,
           a['otel_agent.decision.expected_action'] AS expected_action,
           TRY_CAST(a['otel_agent.decision.policy_passed'] AS BOOLEAN) AS policy_passed,
           TRY_CAST(a['otel_agent.decision.mismatch'] AS BOOLEAN) AS emitted_mismatch,
           TRY_CAST(a['otel_agent.decision.review_required'] AS BOOLEAN) AS review_required,
           a['otel_agent.decision.reason'] AS reason,
           coalesce(a['otel_agent.decision.evidence_refs'], []::VARCHAR[]) AS evidence_refs,
           TRY_CAST(a['otel_agent.iteration'] AS BIGINT) AS iteration,
           * EXCLUDE (a, recorded_at), recorded_at AS decided_at
    FROM oa_record_spans('otel_agent.decision', 'decision', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.decision.id": "VARCHAR",
               "otel_agent.decision.name": "VARCHAR", "otel_agent.decision.model_decision": "VARCHAR",
               "otel_agent.decision.model_action": "VARCHAR", "otel_agent.decision.effective_decision": "VARCHAR",
               "otel_agent.decision.effective_action": "VARCHAR", "otel_agent.decision.expected_action": "VARCHAR",
               "otel_agent.decision.policy_passed": "VARCHAR", "otel_agent.decision.mismatch": "VARCHAR",
               "otel_agent.decision.review_required": "VARCHAR", "otel_agent.decision.reason": "VARCHAR",
               "otel_agent.decision.evidence_refs": ["VARCHAR"], "otel_agent.iteration": "VARCHAR",
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.decision.id'] IS NOT NULL
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
SELECT a['otel_agent.badcase.id'] AS badcase_id,
       a['otel_agent.badcase.stage'] AS stage,
       a['otel_agent.badcase.error_type'] AS error_type,
       a['otel_agent.badcase.message'] AS message,
       a['otel_agent.badcase.provider'] AS provider,
       a['otel_agent.badcase.model'] AS model,
       a['otel_agent.badcase.raw_model_output'] AS raw_model_output,
       coalesce(TRY_CAST(a['otel_agent.badcase.raw_model_output_truncated'] AS BOOLEAN), false)
           AS raw_model_output_truncated,
       coalesce(TRY_CAST(a['otel_agent.badcase.raw_model_output_bytes'] AS BIGINT),
                octet_length(encode(a['otel_agent.badcase.raw_model_output']))) AS raw_model_output_bytes,
       run_id,
       TRY_CAST(a['otel_agent.iteration'] AS BIGINT) AS iteration,
       * EXCLUDE (a, run_id)
FROM oa_record_spans('otel_agent.badcase', 'badcase', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.badcase.id": "VARCHAR",
               "otel_agent.badcase.stage": "VARCHAR", "otel_agent.badcase.error_type": "VARCHAR",
               "otel_agent.badcase.message": "VARCHAR", "otel_agent.badcase.provider": "VARCHAR",
               "otel_agent.badcase.model": "VARCHAR", "otel_agent.badcase.raw_model_output": "VARCHAR",
               "otel_agent.badcase.raw_model_output_truncated": "VARCHAR",
               "otel_agent.badcase.raw_model_output_bytes": "VARCHAR", "otel_agent.iteration": "VARCHAR",
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
WHERE a['otel_agent.badcase.id'] IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY badcase_id ORDER BY recorded_at, trace_id, span_id) = 1;
