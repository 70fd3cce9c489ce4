-- Data dependencies of model calls and tool invocations (seed 001's agent_runs.json; docs/views-evidence.md):
-- one row per artifact / record a call read (direction 'input') or produced ('output'), as the call named it
-- (otel_agent.call.input_artifacts / output_artifacts: free-form names or ids). A reference is resolved when it
-- is an artifact version id, an artifact id, or the name of an artifact of the same run. The round is the
-- call's own otel_agent.iteration, else its step's; the agent the call's gen_ai.agent.name, else its step's.
-- "Which artifacts did quality-review round 2 depend on, and what did it produce":
--   SELECT direction, ref FROM call_dependencies WHERE prompt_name = 'quality_review' AND iteration = 2
CREATE OR REPLACE VIEW call_dependencies AS
WITH calls AS (
    SELECT 'provider_call' AS call_kind, run_id, step_id, trace_id, span_id, span_name,
           request_model AS subject, prompt_name, prompt_version, agent_name, iteration,
           input_artifacts, output_artifacts, start_time, is_error
    FROM provider_calls
    UNION ALL
    SELECT 'tool_invocation', run_id, step_id, trace_id, span_id, span_name,
           tool_name, NULL, NULL, agent_name, iteration,
           input_artifacts, output_artifacts, start_time, is_error
    FROM tool_invocations
),
refs AS (
    SELECT c.*, 'input' AS direction, unnest(c.input_artifacts) AS ref,
           generate_subscripts(c.input_artifacts, 1) AS position
    FROM calls c
    UNION ALL
    SELECT c.*, 'output', unnest(c.output_artifacts), generate_subscripts(c.output_artifacts, 1)
    FROM calls c
),
named AS (
    SELECT run_id, name, min(artifact_id) AS artifact_id
    FROM artifacts
    WHERE name IS NOT NULL AND run_id IS NOT NULL
    GROUP BY ALL
)
SELECT r.run_id, r.step_id, s.step_name,
       coalesce(r.iteration, s.iteration) AS iteration,
       coalesce(r.agent_name, s.agent_name) AS agent_name,
       r.call_kind, r.subject, r.prompt_name, r.prompt_version,
       r.direction, r.position, r.ref,
       coalesce(v.artifact_id, a.artifact_id, n.artifact_id) AS artifact_id,
       v.version_id AS artifact_version_id,
       v.version AS artifact_version,
       r.is_error, r.start_time, r.trace_id, r.span_id
FROM refs r
LEFT JOIN steps s ON s.run_id = r.run_id AND s.step_id = r.step_id
LEFT JOIN artifact_versions v ON v.version_id = r.ref
LEFT JOIN artifacts a ON v.version_id IS NULL AND a.artifact_id = r.ref
LEFT JOIN named n ON v.version_id IS NULL AND a.artifact_id IS NULL AND n.run_id = r.run_id AND n.name = r.ref;
