-- run_timeline: the business timeline of a run — ordered state transitions, not a log:
--   run.started / run.finished / run.failed          (the run span)
--   step.started / step.finished / step.failed       (step spans)
--   guard.blocked, verifier.failed                   (guard / verifier results)
--   fallback                                         (otel_agent.fallback events on provider calls)
--   budget.exceeded                                  (otel_agent.budget_exceeded events on the run span)
--   handoff.<transition>                             (our receipt transitions: delegated, accepted, ...)
--   handoff                                          (third-party handoff spans: OpenAI Agents, OpenLLMetry;
--                                                     subject: target agent, detail: source agent)
--   artifact.version_created                         (our artifact_version records)
-- seq orders each run's rows by time; ties keep the lifecycle order (started < inner events < finished).
CREATE OR REPLACE MACRO run_timeline_for_run(rid) AS TABLE
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
rows AS (
    SELECT run_id, start_time AS time, 0.0 AS ord, 'run.started' AS event,
           coalesce(workflow_name, agent_name, span_name) AS subject, CAST(NULL AS VARCHAR) AS detail,
           step_id, trace_id, span_id
    FROM cs WHERE category = 'flow_run'
    UNION ALL
    SELECT run_id, end_time, 9.0, CASE WHEN is_error THEN 'run.failed' ELSE 'run.finished' END,
           coalesce(workflow_name, agent_name, span_name), error_type, step_id, trace_id, span_id
    FROM cs WHERE category = 'flow_run'
    UNION ALL
    SELECT run_id, start_time, 1.0, 'step.started', step_name, CAST(NULL AS VARCHAR), step_id, trace_id, span_id
    FROM cs WHERE category = 'step'
    UNION ALL
    SELECT run_id, end_time, 8.0, CASE WHEN is_error THEN 'step.failed' ELSE 'step.finished' END,
           step_name, error_type, step_id, trace_id, span_id
    FROM cs WHERE category = 'step'
    UNION ALL
    SELECT run_id, end_time, 5.0, 'guard.blocked', guard_name, guard_reason, step_id, trace_id, span_id
    FROM cs WHERE category = 'guard_result' AND guard_outcome = 'blocked'
    UNION ALL
    SELECT run_id, end_time, 5.0, 'verifier.failed', verifier_name, verifier_reason, step_id, trace_id, span_id
    FROM cs WHERE category = 'verifier_result' AND verifier_outcome = 'failed'
    UNION ALL
    SELECT cs.run_id, e.time, 4.0, 'fallback',
           concat_ws('/', e.attributes->>'otel_agent.fallback.from_provider',
                     e.attributes->>'otel_agent.fallback.from_model')
           || ' -> ' ||
           concat_ws('/', e.attributes->>'otel_agent.fallback.to_provider',
                     e.attributes->>'otel_agent.fallback.to_model'),
           e.attributes->>'otel_agent.fallback.reason', cs.step_id, cs.trace_id, cs.span_id
    FROM events AS e JOIN cs ON cs.trace_id = e.trace_id AND cs.span_id = e.span_id
    WHERE e.name = 'otel_agent.fallback'
    UNION ALL
    SELECT cs.run_id, e.time, 4.0, 'budget.exceeded', e.attributes->>'otel_agent.budget.name',
           'used ' || CAST(e.attributes->>'otel_agent.budget.used' AS VARCHAR) || ' > limit '
               || CAST(e.attributes->>'otel_agent.budget.limit' AS VARCHAR),
           cs.step_id, cs.trace_id, cs.span_id
    FROM events AS e JOIN cs ON cs.trace_id = e.trace_id AND cs.span_id = e.span_id
    WHERE e.name = 'otel_agent.budget_exceeded'
    UNION ALL
    SELECT run_id, start_time,
           5.0 + CASE receipt_transition
                     WHEN 'delegated' THEN 0.1 WHEN 'accepted' THEN 0.2 WHEN 'progress' THEN 0.3
                     WHEN 'waiting' THEN 0.3 WHEN 'completed' THEN 0.4 ELSE 0.5 END,
           'handoff.' || coalesce(receipt_transition, 'work'),
           coalesce(handoff_to, receipt_expected_artifact, receipt_handoff_id),
           concat_ws(' ', 'operation ' || receipt_operation_id, 'handoff ' || receipt_handoff_id,
                     'waiting_for ' || receipt_waiting_for, 'reason ' || receipt_reason),
           step_id, trace_id, span_id
    FROM cs WHERE record_kind = 'receipt_transition'
    UNION ALL
    SELECT h.run_id, h.start_time, 5.0, 'handoff', h.handoff_to, coalesce(h.handoff_from, st.step_name),
           h.step_id, h.trace_id, h.span_id
    FROM cs AS h
    LEFT JOIN (SELECT run_id, step_id, any_value(step_name) AS step_name
               FROM cs WHERE category = 'step' GROUP BY ALL) AS st
      ON st.run_id = h.run_id AND st.step_id = h.step_id
    WHERE h.category = 'handoff' AND h.record_kind IS NULL
    UNION ALL
    SELECT run_id, start_time, 6.0, 'artifact.version_created', artifact_id,
           concat_ws(' ', 'v' || CAST(artifact_version_number AS VARCHAR), artifact_version_id),
           step_id, trace_id, span_id
    FROM cs WHERE record_kind = 'artifact_version'
)
SELECT
    run_id,
    row_number() OVER (PARTITION BY run_id ORDER BY time, ord, span_id, event) AS seq,
    time, event, subject, detail, step_id, trace_id, span_id
FROM rows;

CREATE OR REPLACE VIEW run_timeline AS SELECT * FROM run_timeline_for_run(NULL);
