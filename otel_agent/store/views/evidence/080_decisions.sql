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
),
-- Third-party decisions (issue 32; semantic-conventions-genai, Development), beside ours:
-- * gen_ai.tool.call.decision events (an OTLP log record, or a span event): a framework, harness, policy or human
--   decided on a tool call the model proposed before it ran. The model's proposal is the call ('allow'); the
--   effective decision is gen_ai.tool.call.decision.outcome (allow / deny / require_approval). Keyed by
--   gen_ai.tool.call.id when given (a re-delivered record counts once), else by the event itself.
-- * guardrail results (third-party spans with the provider's gen_ai.guardrail.verdict.type on them): the gate on
--   the model's input or output. The effective decision maps the verdict (deny / block / reject → deny, allow /
--   pass → allow, anything else as given); the provider's own verdict is kept as it came (provider_verdict). The
--   workflow manifest, timeline and metrics already show them as guards: they count decisions of the other sources.
-- Read from the raw rows (no classification of the store: decisions stays cheap).
tool_call_events AS (
    SELECT trace_id, span_id, time AS decided_at, service_name, attributes, content_hash AS k
    FROM logs
    WHERE event_name = 'gen_ai.tool.call.decision'
    QUALIFY row_number() OVER (PARTITION BY time, content_hash ORDER BY received_at) = 1
    UNION ALL
    SELECT e.trace_id, e.span_id, e.time, NULL, e.attributes, CAST(e.event_index AS VARCHAR)
    FROM span_events AS e
    WHERE e.name = 'gen_ai.tool.call.decision'
),
-- third-party guard spans with the provider's own verdict on the span (not our guard records)
guard_spans AS (
    SELECT trace_id, span_id, start_time, service_name, attributes
    FROM spans
    WHERE record_kind IS NULL AND contains(CAST(attributes AS VARCHAR), '"gen_ai.guardrail.verdict.type"')
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
),
-- the run of a third-party record, without classifying the store: the run id of its span, else the earliest run
-- id of its trace (a span of ours around it), else its trace id (as classified_spans says for third-party spans;
-- the typed run_id column, promoted at fold time, is what is read)
third_party_traces AS (
    SELECT DISTINCT trace_id FROM tool_call_events WHERE oa_text(trace_id) IS NOT NULL
    UNION SELECT trace_id FROM guard_spans
),
trace_run AS (
    SELECT s.trace_id, arg_min(s.run_id, s.start_time) AS run_id
    FROM spans AS s
    WHERE s.trace_id IN (SELECT trace_id FROM third_party_traces) AND oa_text(s.run_id) IS NOT NULL
    GROUP BY s.trace_id
),
tool_call_decisions AS (
    SELECT
        coalesce('tool_call:' || oa_text(t.attributes->>'gen_ai.tool.call.id'),
                 'tool_call_event:' || coalesce(t.trace_id, '') || ':' || coalesce(t.span_id, '') || ':' || t.k)
            AS decision_id,
        'tool_call ' || coalesce(oa_text(t.attributes->>'gen_ai.tool.name'), '?') AS name,
        'allow' AS model_decision,
        oa_text(t.attributes->>'gen_ai.tool.name') AS model_action,
        lower(oa_text(t.attributes->>'gen_ai.tool.call.decision.outcome')) AS effective_decision,
        oa_text(coalesce(t.attributes->>'gen_ai.tool.call.decision.reason', t.attributes->>'error.type')) AS reason,
        lower(oa_text(t.attributes->>'gen_ai.tool.call.decision.outcome')) AS provider_verdict,
        oa_text(t.trace_id) AS trace_id, oa_text(t.span_id) AS span_id, t.service_name,
        CASE WHEN oa_text(t.trace_id) IS NOT NULL THEN coalesce(r.run_id, t.trace_id) END AS run_id,
        NULL::VARCHAR AS step_id, t.decided_at
    FROM tool_call_events AS t
    LEFT JOIN trace_run AS r ON r.trace_id = t.trace_id
    WHERE oa_text(t.attributes->>'gen_ai.tool.call.decision.outcome') IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY decision_id ORDER BY t.decided_at, t.trace_id, t.span_id) = 1
),
guardrail_decisions AS (
    SELECT
        'guardrail:' || g.trace_id || ':' || g.span_id AS decision_id,
        'guardrail ' || coalesce(oa_text(g.attributes->>'gen_ai.guardrail.name'),
                                 oa_text(g.attributes->>'gen_ai.guardrail.component.name'), '?') AS name,
        'allow' AS model_decision,
        oa_text(g.attributes->>'gen_ai.guardrail.target.id') AS model_action,
        CASE oa_guardrail_outcome(oa_text(g.attributes->>'gen_ai.guardrail.verdict.type'))
            WHEN 'blocked' THEN 'deny' WHEN 'passed' THEN 'allow'
            ELSE oa_guardrail_outcome(oa_text(g.attributes->>'gen_ai.guardrail.verdict.type'))
        END AS effective_decision,
        oa_text(g.attributes->>'gen_ai.guardrail.verdict.reason') AS reason,
        oa_text(g.attributes->>'gen_ai.guardrail.verdict.type') AS provider_verdict,
        g.trace_id, g.span_id, g.service_name, coalesce(r.run_id, g.trace_id) AS run_id, NULL::VARCHAR AS step_id,
        g.start_time AS decided_at
    FROM guard_spans AS g
    LEFT JOIN trace_run AS r ON r.trace_id = g.trace_id
),
third_party AS (
    SELECT *, 'gen_ai.tool.call.decision' AS source FROM tool_call_decisions
    UNION ALL BY NAME
    SELECT *, 'guardrail' AS source FROM guardrail_decisions
),
all_decisions AS (
    SELECT *, 'otel_agent' AS source, NULL::VARCHAR AS provider_verdict FROM raw
    UNION ALL BY NAME
    SELECT *, NULL::VARCHAR AS expected_action, NULL::BOOLEAN AS policy_passed, NULL::BOOLEAN AS emitted_mismatch,
           effective_decision = 'require_approval' AS review_required, []::VARCHAR[] AS evidence_refs,
           NULL::BIGINT AS iteration, NULL::VARCHAR AS effective_action
    FROM third_party
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
       coalesce(r.annotations, 0) AS human_annotations,
       raw.source, raw.provider_verdict
FROM all_decisions AS raw
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
