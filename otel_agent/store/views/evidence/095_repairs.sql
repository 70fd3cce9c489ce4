-- Repairs and the candidate history (seed 001's repair_history.json and candidate_history.json;
-- docs/views-evidence.md). A repair is a transition, a candidate version a state: candidate_history lines up,
-- per candidate version, its round, its evaluation (the verifier results that targeted it) and the repair that
-- started from it (and the version that repair produced).

CREATE OR REPLACE VIEW repairs AS
WITH raw AS (
    SELECT a['otel_agent.repair.id'] AS repair_id,
           TRY_CAST(a['otel_agent.iteration'] AS BIGINT) AS iteration,
           a['otel_agent.repair.action'] AS action,
           TRY_CAST(a['otel_agent.repair.applied'] AS BOOLEAN) AS applied,
           a['otel_agent.repair.target'] AS target,
           a['otel_agent.repair.before'] AS before,
           a['otel_agent.repair.after'] AS after,
           a['otel_agent.repair.reason'] AS reason,
           a['otel_agent.repair.computed_by'] AS computed_by,
           a['otel_agent.repair.computed_by_name'] AS computed_by_name,
           a['otel_agent.repair.from_version_id'] AS from_version_id,
           a['otel_agent.repair.to_version_id'] AS to_version_id,
           * EXCLUDE (a, recorded_at), recorded_at AS repaired_at
    FROM oa_record_spans('otel_agent.repair', 'repair', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.repair.id": "VARCHAR",
               "otel_agent.iteration": "VARCHAR", "otel_agent.repair.action": "VARCHAR",
               "otel_agent.repair.applied": "VARCHAR",
               "otel_agent.repair.target": "VARCHAR", "otel_agent.repair.before": "VARCHAR",
               "otel_agent.repair.after": "VARCHAR", "otel_agent.repair.reason": "VARCHAR",
               "otel_agent.repair.computed_by": "VARCHAR", "otel_agent.repair.computed_by_name": "VARCHAR",
               "otel_agent.repair.from_version_id": "VARCHAR", "otel_agent.repair.to_version_id": "VARCHAR",
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.repair.id'] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY repair_id ORDER BY repaired_at, trace_id, span_id) = 1
)
SELECT r.repair_id, r.iteration, r.action, r.applied, r.target, r.before, r.after, r.reason, r.computed_by,
       r.computed_by_name, r.from_version_id, r.to_version_id,
       coalesce(f.artifact_id, t.artifact_id) AS artifact_id,
       r.run_id, r.step_id, r.trace_id, r.span_id, r.service_name, r.repaired_at
FROM raw r
LEFT JOIN artifact_versions f ON f.version_id = r.from_version_id
LEFT JOIN artifact_versions t ON t.version_id = r.to_version_id;

CREATE OR REPLACE VIEW candidate_history AS
WITH version_rounds AS (
    SELECT attributes->>'otel_agent.artifact_version.id' AS version_id,
           any_value(TRY_CAST(attributes->>'otel_agent.iteration' AS BIGINT)) AS iteration
    FROM spans
    WHERE name = 'otel_agent.artifact_version' AND (attributes->>'otel_agent.iteration') IS NOT NULL
    GROUP BY ALL
),
candidates AS (
    SELECT artifact_id FROM repairs WHERE artifact_id IS NOT NULL
    UNION
    SELECT artifact_id FROM artifacts WHERE type = 'candidate'
),
evaluations AS (
    SELECT target_id AS version_id,
           count(*) AS evaluations,
           bool_and(passed) AS evaluation_passed,
           arg_max(verifier_name, time) AS verifier_name,
           arg_max(outcome, time) AS evaluation,
           arg_max(score, time) AS evaluation_score,
           arg_max(reason, time) AS evaluation_reason
    FROM verifier_results
    WHERE target_id IS NOT NULL
    GROUP BY ALL
),
from_version AS (
    SELECT from_version_id AS version_id,
           arg_max(repair_id, repaired_at) AS repair_id
    FROM repairs
    WHERE from_version_id IS NOT NULL
    GROUP BY ALL
),
to_version AS (
    SELECT to_version_id AS version_id, arg_min(repair_id, repaired_at) AS produced_by_repair_id
    FROM repairs
    WHERE to_version_id IS NOT NULL
    GROUP BY ALL
)
SELECT v.artifact_id, v.version_id, v.version,
       coalesce(vr.iteration, s.iteration) AS iteration,
       tv.produced_by_repair_id,
       v.content,
       coalesce(e.evaluations, 0) AS evaluations,
       e.evaluation_passed, e.verifier_name, e.evaluation, e.evaluation_score, e.evaluation_reason,
       r.repair_id, r.action AS repair_action, r.applied AS repair_applied, r.target AS repair_target,
       r.before AS repair_before, r.after AS repair_after, r.reason AS repair_reason,
       r.computed_by AS repair_computed_by,
       r.to_version_id AS next_version_id,
       v.run_id, v.step_id, v.created_at
FROM artifact_versions v
JOIN candidates c ON c.artifact_id = v.artifact_id
LEFT JOIN version_rounds vr ON vr.version_id = v.version_id
LEFT JOIN steps s ON s.run_id = v.run_id AND s.step_id = v.step_id
LEFT JOIN evaluations e ON e.version_id = v.version_id
LEFT JOIN from_version fv ON fv.version_id = v.version_id
LEFT JOIN repairs r ON r.repair_id = fv.repair_id
LEFT JOIN to_version tv ON tv.version_id = v.version_id;
