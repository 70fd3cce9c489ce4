-- The timeline of a run's spans, one rule for both timelines: run_timeline (below) and the business timeline
-- (business_timeline_for_run, evidence/110_workflow_manifest.sql, which adds the evidence records' events).
-- Event names follow seed 000 where it names them (step.started, step.succeeded, proxy_fallback, guard.blocked):
--   run.started / run.succeeded / run.failed        (the run span; no outcome while it is in progress)
--   step.started / step.succeeded / step.failed     (step spans; likewise)
--   guard.<outcome>, verifier.<outcome>             (guard / verifier results; run_timeline keeps guard.blocked
--                                                    and verifier.failed)
--   proxy_fallback                                  (otel_agent.fallback events on provider calls)
--   budget.exceeded                                 (otel_agent.budget_exceeded events on the run span)
--   handoff.<transition>                            (our receipt transitions: delegated, accepted, ...)
--   handoff                                         (third-party handoff spans: OpenAI Agents, OpenLLMetry;
--                                                    subject: target agent)
--   artifact.created, artifact.version_created      (our artifact / artifact_version records; subject: artifact)
--   evidence.added                                  (our evidence_item records; subject: evidence id)
--
-- oa_span_timeline_for_run(rid): those rows with the business timeline's columns (outcome, layer, reason, actor,
-- detail, iteration, record_id), ord (ties keep the lifecycle order: started < inner events < finished),
-- run_timeline's detail column (brief), and which timeline a row is not in (in_run_timeline /
-- in_business_timeline false; NULL: in both).
CREATE OR REPLACE MACRO oa_span_timeline_for_run(rid) AS TABLE
WITH cs AS MATERIALIZED (
    SELECT * FROM classified_spans_for_run(rid)
),
events AS (
    SELECT e.trace_id, e.span_id, e.name, e.time, e.attributes
    FROM (
        SELECT DISTINCT ON (trace_id, span_id, event_index) trace_id, span_id, name, time, attributes
        FROM span_events
        WHERE name IN ('otel_agent.fallback', 'otel_agent.budget_exceeded')
    ) AS e
    SEMI JOIN cs ON cs.trace_id = e.trace_id AND cs.span_id = e.span_id
),
-- the record ids the classification does not carry (promoted columns of spans, fold/promoted.py)
records AS (
    SELECT DISTINCT s.trace_id, s.span_id, s.record_kind, s.record_id, s.record_ref
    FROM spans AS s
    SEMI JOIN cs ON cs.trace_id = s.trace_id AND cs.span_id = s.span_id
    WHERE s.record_kind = 'evidence_item' AND s.record_id IS NOT NULL
)
SELECT run_id, start_time AS time, 0.0 AS ord, 'run.started' AS event,
       coalesce(workflow_name, agent_name, span_name) AS subject, step_id, trace_id, span_id
FROM cs WHERE category = 'flow_run'
UNION ALL BY NAME
SELECT run_id, end_time AS time, 9.0 AS ord, CASE WHEN is_error THEN 'run.failed' ELSE 'run.succeeded' END AS event,
       coalesce(workflow_name, agent_name, span_name) AS subject,
       CASE WHEN is_error THEN 'failed' ELSE 'succeeded' END AS outcome, error_type AS reason, error_type AS brief,
       step_id, trace_id, span_id
FROM cs WHERE category = 'flow_run' AND NOT coalesce(in_progress, false)  -- announced, not ended: no outcome yet
UNION ALL BY NAME
SELECT run_id, start_time AS time, 1.0 AS ord, 'step.started' AS event, step_name AS subject, iteration,
       step_id, trace_id, span_id
FROM cs WHERE category = 'step'
UNION ALL BY NAME
SELECT run_id, end_time AS time, 8.0 AS ord,
       CASE WHEN is_error THEN 'step.failed' ELSE 'step.succeeded' END AS event, step_name AS subject,
       CASE WHEN is_error THEN 'failed' ELSE 'succeeded' END AS outcome, error_type AS reason, error_type AS brief,
       iteration, step_id, trace_id, span_id
FROM cs WHERE category = 'step' AND NOT coalesce(in_progress, false)
UNION ALL BY NAME
-- gate results: which layer (the guard's stage), accepted or blocked, and why
SELECT run_id, end_time AS time, 5.0 AS ord, 'guard.' || coalesce(guard_outcome, 'result') AS event,
       guard_name AS subject, guard_outcome AS outcome, guard_stage AS layer, guard_reason AS reason,
       guard_target_id AS detail, guard_reason AS brief, coalesce(guard_outcome = 'blocked', false) AS in_run_timeline,
       step_id, trace_id, span_id
FROM cs WHERE category = 'guard_result'
UNION ALL BY NAME
SELECT run_id, end_time AS time, 5.0 AS ord, 'verifier.' || coalesce(verifier_outcome, 'result') AS event,
       verifier_name AS subject, verifier_outcome AS outcome, 'verifier' AS layer, verifier_reason AS reason,
       concat_ws(' ', 'score ' || CAST(verifier_score AS VARCHAR), verifier_target_id) AS detail,
       verifier_reason AS brief, coalesce(verifier_outcome = 'failed', false) AS in_run_timeline,
       step_id, trace_id, span_id
FROM cs WHERE category = 'verifier_result'
UNION ALL BY NAME
SELECT cs.run_id, e.time, 4.0 AS ord, 'proxy_fallback' AS event,
       concat_ws('/', e.attributes->>'otel_agent.fallback.from_provider',
                 e.attributes->>'otel_agent.fallback.from_model')
       || ' -> ' ||
       concat_ws('/', e.attributes->>'otel_agent.fallback.to_provider',
                 e.attributes->>'otel_agent.fallback.to_model') AS subject,
       e.attributes->>'otel_agent.fallback.status' AS outcome,  -- a proxy's fallback says how it ended
       e.attributes->>'otel_agent.fallback.reason' AS reason, e.attributes->>'otel_agent.fallback.reason' AS brief,
       cs.step_id, cs.trace_id, cs.span_id
FROM events AS e JOIN cs ON cs.trace_id = e.trace_id AND cs.span_id = e.span_id
WHERE e.name = 'otel_agent.fallback'
UNION ALL BY NAME
SELECT cs.run_id, e.time, 4.0 AS ord, 'budget.exceeded' AS event,
       e.attributes->>'otel_agent.budget.name' AS subject, 'exceeded' AS outcome, 'budget' AS layer,
       'used ' || CAST(e.attributes->>'otel_agent.budget.used' AS VARCHAR) || ' > limit '
           || CAST(e.attributes->>'otel_agent.budget.limit' AS VARCHAR) AS detail,
       'used ' || CAST(e.attributes->>'otel_agent.budget.used' AS VARCHAR) || ' > limit '
           || CAST(e.attributes->>'otel_agent.budget.limit' AS VARCHAR) AS brief,
       cs.step_id, cs.trace_id, cs.span_id
FROM events AS e JOIN cs ON cs.trace_id = e.trace_id AND cs.span_id = e.span_id
WHERE e.name = 'otel_agent.budget_exceeded'
UNION ALL BY NAME
SELECT run_id, start_time AS time,
       5.0 + CASE receipt_transition
                 WHEN 'delegated' THEN 0.1 WHEN 'accepted' THEN 0.2 WHEN 'progress' THEN 0.3
                 WHEN 'waiting' THEN 0.3 WHEN 'completed' THEN 0.4 ELSE 0.5 END AS ord,
       'handoff.' || coalesce(receipt_transition, 'work') AS event,
       coalesce(handoff_to, receipt_expected_artifact, receipt_handoff_id) AS subject,
       receipt_transition AS outcome, coalesce(receipt_reason, receipt_waiting_for) AS reason,
       concat_ws(' ', 'operation ' || receipt_operation_id, 'handoff ' || receipt_handoff_id) AS detail,
       concat_ws(' ', 'operation ' || receipt_operation_id, 'handoff ' || receipt_handoff_id,
                 'waiting_for ' || receipt_waiting_for, 'reason ' || receipt_reason) AS brief,
       receipt_operation_id AS record_id, step_id, trace_id, span_id
FROM cs WHERE record_kind = 'receipt_transition'
UNION ALL BY NAME
SELECT h.run_id, h.start_time AS time, 5.0 AS ord, 'handoff' AS event, h.handoff_to AS subject,
       h.handoff_from AS actor, coalesce(h.handoff_from, st.step_name) AS brief, h.step_id, h.trace_id, h.span_id
FROM cs AS h
LEFT JOIN (SELECT run_id, step_id, any_value(step_name) AS step_name
           FROM cs WHERE category = 'step' GROUP BY ALL) AS st
  ON st.run_id = h.run_id AND st.step_id = h.step_id
WHERE h.category = 'handoff' AND h.record_kind IS NULL
UNION ALL BY NAME
-- our artifact_version records: run_timeline only (the business timeline reads the artifact_versions view)
SELECT run_id, start_time AS time, 6.1 AS ord, 'artifact.version_created' AS event, artifact_id AS subject,
       concat_ws(' ', 'v' || CAST(artifact_version_number AS VARCHAR), artifact_version_id) AS brief,
       false AS in_business_timeline, step_id, trace_id, span_id
FROM cs WHERE record_kind = 'artifact_version'
UNION ALL BY NAME
-- seed 000's recordEvent types for our artifact and evidence_item records: run_timeline only (the business
-- timeline reads the artifacts and evidence_items views, with the same event names)
SELECT run_id, start_time AS time, 6.0 AS ord, 'artifact.created' AS event, artifact_id AS subject,
       false AS in_business_timeline, step_id, trace_id, span_id
FROM cs WHERE record_kind = 'artifact' AND artifact_id IS NOT NULL
UNION ALL BY NAME
SELECT cs.run_id, cs.start_time AS time, 6.0 AS ord, 'evidence.added' AS event, r.record_id AS subject,
       'source ' || r.record_ref AS brief, false AS in_business_timeline, cs.step_id, cs.trace_id, cs.span_id
FROM records AS r JOIN cs ON cs.trace_id = r.trace_id AND cs.span_id = r.span_id
WHERE r.record_kind = 'evidence_item';

-- run_timeline: the business timeline of a run from its spans alone — ordered state transitions, not a log.
-- seq orders each run's rows by time; ties keep the lifecycle order (started < inner events < finished).
CREATE OR REPLACE MACRO run_timeline_for_run(rid) AS TABLE
SELECT
    run_id,
    row_number() OVER (PARTITION BY run_id ORDER BY time, ord, span_id, event) AS seq,
    time, event, subject, brief AS detail, step_id, trace_id, span_id
FROM oa_span_timeline_for_run(rid)
WHERE coalesce(in_run_timeline, true);

CREATE OR REPLACE VIEW run_timeline AS SELECT * FROM run_timeline_for_run(NULL);
