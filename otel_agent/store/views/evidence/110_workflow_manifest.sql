-- The workflow manifest and its business timeline (seed 001's workflow_manifest.json; issue 15 item 4;
-- docs/views-evidence.md). Both read what the other views already derive — runs, steps, guard and verifier
-- results (ours and third-party: a GenAI apply_guardrail or OpenInference GUARDRAIL span is a gate result),
-- decisions with their human verdicts (not the guardrail rows of `decisions`: those are guard results already),
-- repairs, artifacts, evidence, authorizations, recoveries, receipts —
-- so a rule lives in one place. Event names follow seed 000 where it names them (step.started, step.succeeded,
-- proxy_fallback, guard.blocked, evidence.added, artifact.created).

CREATE OR REPLACE MACRO business_timeline_for_run(rid) AS TABLE
WITH run_records AS (  -- what a review may target, with its run
    SELECT 'decision' AS kind, decision_id AS id, run_id
    FROM decisions WHERE (rid IS NULL OR run_id = rid) AND source <> 'guardrail'  -- guardrails: guard events
    UNION ALL
    SELECT 'artifact_version', version_id, run_id FROM artifact_versions WHERE rid IS NULL OR run_id = rid
    UNION ALL
    SELECT 'claim', claim_id, run_id FROM claims WHERE rid IS NULL OR run_id = rid
),
rows AS (
    -- the run's spans: the timeline rule run_timeline shares (oa_span_timeline_for_run, runs/120_run_timeline.sql)
    SELECT * EXCLUDE (brief, in_run_timeline, in_business_timeline)
    FROM oa_span_timeline_for_run(rid)
    WHERE coalesce(in_business_timeline, true)
    UNION ALL BY NAME
    -- decision: the agent's output, the policy gate, the effective decision
    SELECT run_id, decided_at AS time, 6.0 AS ord, 'decision.recorded' AS event, name AS subject,
           effective_decision AS outcome, 'policy_gate' AS layer, reason, iteration, decision_id AS record_id,
           concat_ws(' ', model_decision, model_action) AS agent_output,
           concat_ws(', ', CASE policy_passed WHEN true THEN 'passed' WHEN false THEN 'failed' END,
                     'expected ' || expected_action) AS policy_gate,
           concat_ws(' ', effective_decision, effective_action) AS effective,
           step_id, trace_id, span_id
    FROM decisions WHERE (rid IS NULL OR run_id = rid) AND source <> 'guardrail'
    UNION ALL BY NAME
    -- human reviews of the run's decisions, artifact versions and claims (the reviews table, append-only)
    SELECT rr.run_id, CAST(timezone('UTC', v.reviewed_at) AS TIMESTAMP_NS) AS time, 7.0 AS ord,
           'review.' || CASE v.decision WHEN 'approve' THEN 'approved' WHEN 'reject' THEN 'rejected'
                                        WHEN 'annotate' THEN 'annotated' WHEN 'acknowledge' THEN 'acknowledged'
                                        WHEN 'resolve' THEN 'resolved' ELSE v.decision END AS event,
           v.target_kind || ' ' || v.target_id AS subject, v.decision AS outcome, 'human' AS layer,
           v.reason, v.reviewer AS actor, v.review_id AS record_id
    FROM reviews v JOIN run_records rr ON rr.kind = v.target_kind AND rr.id = v.target_id
    UNION ALL BY NAME
    SELECT run_id, repaired_at AS time, 6.0 AS ord,
           CASE WHEN applied THEN 'repair.applied' ELSE 'repair.not_applied' END AS event, action AS subject,
           CASE WHEN applied THEN 'applied' ELSE 'not_applied' END AS outcome, reason, iteration,
           concat_ws(':', computed_by, computed_by_name) AS actor,
           concat_ws(' ', target || ':', before || ' -> ' || after) AS detail, repair_id AS record_id,
           step_id, trace_id, span_id
    FROM repairs WHERE rid IS NULL OR run_id = rid
    UNION ALL BY NAME
    SELECT run_id, created_at AS time, 6.0 AS ord, 'artifact.created' AS event, artifact_id AS subject,
           concat_ws(' ', type, name) AS detail, artifact_id AS record_id, step_id, trace_id, span_id
    FROM artifacts WHERE rid IS NULL OR run_id = rid
    UNION ALL BY NAME
    SELECT run_id, created_at AS time, 6.1 AS ord, 'artifact.version_created' AS event, artifact_id AS subject,
           status AS outcome, 'v' || CAST(version AS VARCHAR) AS detail, version_id AS record_id,
           step_id, trace_id, span_id
    FROM artifact_versions WHERE rid IS NULL OR run_id = rid
    UNION ALL BY NAME
    SELECT run_id, recorded_at AS time, 6.0 AS ord, 'evidence.added' AS event, evidence_id AS subject,
           confidence AS outcome, source_id AS detail, evidence_id AS record_id, step_id, trace_id, span_id
    FROM evidence_items WHERE rid IS NULL OR run_id = rid
    UNION ALL BY NAME
    SELECT run_id, authorized_at AS time, 2.0 AS ord,
           CASE WHEN granted THEN 'authorization.granted' WHEN NOT granted THEN 'authorization.refused'
                ELSE 'authorization.recorded' END AS event,
           scope AS subject, CASE WHEN granted THEN 'granted' WHEN NOT granted THEN 'refused' END AS outcome,
           'authorization' AS layer, reason, authorized_by AS actor, authorization_id AS record_id,
           step_id, trace_id, span_id
    FROM authorizations WHERE rid IS NULL OR run_id = rid
    UNION ALL BY NAME
    SELECT run_id, time, 6.5 AS ord, 'recovery.' || transition AS event, operation_id AS subject,
           transition AS outcome, 'recovery' AS layer, reason, authority AS actor,
           CASE transition
               WHEN 'started' THEN concat_ws(', ', mode, action, 'trigger ' || trigger,
                                             'max ' || CAST(max_attempts AS VARCHAR) || ' attempts',
                                             'max $' || CAST(max_cost_usd AS VARCHAR),
                                             'within ' || CAST(time_limit_s AS VARCHAR) || ' s',
                                             'success: ' || success_evidence)
               WHEN 'attempt' THEN concat_ws(', ', 'attempt ' || CAST(attempt AS VARCHAR), handoff_id,
                                             '$' || CAST(cost_usd AS VARCHAR))
               ELSE evidence_ref
           END AS detail,
           recovery_id AS record_id, step_id, trace_id, span_id
    FROM recovery_transitions WHERE run_id IS NOT NULL AND (rid IS NULL OR run_id = rid)
    UNION ALL BY NAME
    SELECT run_id, recorded_at AS time, 5.5 AS ord, 'badcase.recorded' AS event, stage AS subject,
           error_type AS outcome, stage AS layer, message AS reason, iteration, badcase_id AS record_id,
           step_id, trace_id, span_id
    FROM badcases WHERE rid IS NULL OR run_id = rid
)
SELECT run_id,
       row_number() OVER (PARTITION BY run_id ORDER BY time, ord, span_id, event, record_id) AS seq,
       time, event, subject, outcome, layer, reason, actor, detail,
       agent_output, policy_gate, effective,
       CAST(iteration AS BIGINT) AS iteration, record_id, step_id, trace_id, span_id
FROM rows
WHERE run_id IS NOT NULL;

CREATE OR REPLACE VIEW business_timeline AS SELECT * FROM business_timeline_for_run(NULL);

-- One row per run: where it is, what it used of its budget, whether it is authorised, its round, its final
-- decision (the last decision's effective decision, or the human verdict on it when it asked for one), error.
CREATE OR REPLACE MACRO workflow_manifest_for_run(rid) AS TABLE
WITH r AS (
    SELECT * FROM runs_for_run(rid)
),
target AS (
    SELECT r.run_id, s.attributes->>'otel_agent.run.target' AS target
    FROM r JOIN spans s ON s.trace_id = r.trace_id AND s.span_id = r.run_span_id
    WHERE (s.attributes->>'otel_agent.run.target') IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY r.run_id ORDER BY s.end_time) = 1
),
cs AS MATERIALIZED (  -- classified once (each *_for_run macro would classify again)
    SELECT run_id, category, nested_call, provider, step_name, iteration, is_error, start_time, span_id
    FROM classified_spans_for_run(rid)
    WHERE category = 'step' OR (category = 'provider_call' AND NOT nested_call)
),
prov AS (  -- as provider_calls counts them: nested duplicates once
    SELECT run_id, provider, count(*) AS n, min(start_time) AS first_used
    FROM cs WHERE category = 'provider_call' AND provider IS NOT NULL GROUP BY ALL
),
providers AS (
    SELECT run_id, arg_min(provider, (-n, first_used, provider)) AS provider,
           list(provider ORDER BY first_used, provider) AS providers
    FROM prov GROUP BY run_id
),
st AS (
    SELECT run_id, arg_max(step_name, (start_time, span_id)) FILTER (WHERE category = 'step') AS current_step,
           arg_min(step_name, (start_time, span_id)) FILTER (WHERE category = 'step' AND is_error) AS failed_step
    FROM cs GROUP BY run_id
),
iterations AS (
    SELECT run_id, max(iteration) AS iteration FROM (
        SELECT run_id, iteration FROM cs
        UNION ALL SELECT run_id, iteration FROM decisions WHERE (rid IS NULL OR run_id = rid) AND source <> 'guardrail'
        UNION ALL SELECT run_id, iteration FROM repairs WHERE rid IS NULL OR run_id = rid
        UNION ALL SELECT run_id, iteration FROM badcases WHERE rid IS NULL OR run_id = rid
    ) GROUP BY run_id
),
auth AS (
    SELECT run_id, count(*) AS authorizations,
           arg_max(granted, (authorized_at, authorization_id)) AS authorized,
           arg_max(authorized_by, (authorized_at, authorization_id)) AS authorized_by,
           max(authorized_at) AS authorized_at,
           arg_max(scope, (authorized_at, authorization_id)) AS authorization_scope
    FROM authorizations WHERE rid IS NULL OR run_id = rid GROUP BY run_id
),
dec AS (
    SELECT run_id, count(*) AS decisions,
           count(*) FILTER (WHERE effective_decision = 'human_review' AND human_verdict IS NULL)
               AS pending_human_reviews,
           arg_max({'id': decision_id, 'effective': effective_decision, 'verdict': human_verdict,
                    'reviewer': human_reviewer},
                   (decided_at, decision_id)) AS last
    FROM decisions WHERE (rid IS NULL OR run_id = rid) AND source <> 'guardrail' GROUP BY run_id
),
counts AS (
    SELECT run_id, sum(repairs) AS repairs, sum(recoveries) AS recoveries, sum(badcases) AS badcases FROM (
        SELECT run_id, count(*) AS repairs, 0 AS recoveries, 0 AS badcases
        FROM repairs WHERE rid IS NULL OR run_id = rid GROUP BY run_id
        UNION ALL
        SELECT run_id, 0, count(DISTINCT recovery_id), 0
        FROM recovery_transitions WHERE run_id IS NOT NULL AND (rid IS NULL OR run_id = rid) GROUP BY run_id
        UNION ALL
        SELECT run_id, 0, 0, count(*) FROM badcases WHERE rid IS NULL OR run_id = rid GROUP BY run_id
    ) GROUP BY run_id
)
SELECT r.run_id, r.workflow_name, r.agent_name, r.status, t.target, p.provider,
       coalesce(p.providers, []::VARCHAR[]) AS providers,
       st.current_step,
       CAST(i.iteration AS BIGINT) AS current_iteration,
       a.authorized, a.authorized_by, a.authorized_at, a.authorization_scope,
       coalesce(a.authorizations, 0) AS authorizations,
       r.budget_max_model_calls, r.provider_calls AS model_calls_used,
       r.budget_max_tool_calls, r.tool_invocations AS tool_calls_used,
       r.budget_max_cost_usd, r.cost_usd AS cost_used_usd,
       r.budget_exceeded, r.budget_exceeded_limits,
       CASE WHEN d.last.effective = 'human_review' AND d.last.verdict IS NOT NULL THEN d.last.verdict
            ELSE d.last.effective END AS final_decision,
       CASE WHEN d.last.id IS NULL THEN NULL
            WHEN d.last.effective = 'human_review' AND d.last.verdict IS NOT NULL THEN 'human'
            ELSE 'policy_gate' END AS final_decision_source,
       CASE WHEN d.last.effective = 'human_review' THEN d.last.reviewer END AS final_decided_by,
       d.last.id AS final_decision_id,
       coalesce(d.decisions, 0) AS decisions,
       coalesce(d.pending_human_reviews, 0) AS pending_human_reviews,
       CAST(coalesce(c.repairs, 0) AS BIGINT) AS repairs,
       CAST(coalesce(c.recoveries, 0) AS BIGINT) AS recoveries,
       CAST(coalesce(c.badcases, 0) AS BIGINT) AS badcases,
       r.guard_blocks,
       r.error_type, st.failed_step,
       r.start_time, r.end_time, r.duration_ms, r.service_name, r.trace_id
FROM r
LEFT JOIN target t USING (run_id)
LEFT JOIN providers p USING (run_id)
LEFT JOIN st USING (run_id)
LEFT JOIN iterations i USING (run_id)
LEFT JOIN auth a USING (run_id)
LEFT JOIN dec d USING (run_id)
LEFT JOIN counts c USING (run_id);

CREATE OR REPLACE VIEW workflow_manifest AS SELECT * FROM workflow_manifest_for_run(NULL);
