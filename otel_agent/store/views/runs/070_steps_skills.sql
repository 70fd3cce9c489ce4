-- steps and skill_invocations: one row per step / skill invocation span, with what happened directly in it
-- (items whose step_id / skill_invocation_id is this one; a nested third-party step keeps its own items).

-- What a step / skill invocation holds directly (an aggregate over its items, one struct): provider calls and
-- tool invocations counted once (nested duplicates left out, as provider_calls does), their tokens and cost,
-- and the guard results that blocked.
CREATE OR REPLACE MACRO oa_items_inside(category, nested_call, guard_outcome, input_tokens, output_tokens, cost_usd)
AS {
    'provider_calls': count(*) FILTER (WHERE category = 'provider_call' AND NOT nested_call),
    'tool_invocations': count(*) FILTER (WHERE category = 'tool_invocation' AND NOT nested_call),
    'guard_blocks': count(*) FILTER (WHERE category = 'guard_result' AND guard_outcome = 'blocked'),
    'input_tokens': CAST(sum(input_tokens) FILTER (WHERE category = 'provider_call' AND NOT nested_call) AS BIGINT),
    'output_tokens': CAST(sum(output_tokens) FILTER (WHERE category = 'provider_call' AND NOT nested_call) AS BIGINT),
    'cost_usd': fsum(cost_usd) FILTER (WHERE category IN ('provider_call', 'tool_invocation') AND NOT nested_call)
};

CREATE OR REPLACE MACRO skill_invocations_for_run(rid) AS TABLE
WITH cs AS MATERIALIZED (
    SELECT * FROM oa_priced(rid)
),
inside AS (
    SELECT
        run_id, skill_invocation_id,
        oa_items_inside(category, nested_call, guard_outcome, input_tokens, output_tokens, cost_usd) AS t
    FROM cs
    WHERE skill_invocation_id IS NOT NULL AND category <> 'skill_invocation'
    GROUP BY run_id, skill_invocation_id
)
SELECT
    s.run_id, s.step_id, s.skill_invocation_id, s.skill_name, s.skill_version,
    s.skill_name || '@' || coalesce(s.skill_version, '') AS skill_ref,
    s.trace_id, s.span_id, s.parent_span_id, s.span_name, s.convention,
    s.start_time, s.end_time, s.duration_ms, s.status_code, s.is_error, s.error_type,
    coalesce(i.t.provider_calls, 0) AS provider_calls,
    coalesce(i.t.tool_invocations, 0) AS tool_invocations,
    coalesce(i.t.guard_blocks, 0) AS guard_blocks,
    i.t.input_tokens, i.t.output_tokens, i.t.cost_usd,
    s.service_name
FROM cs AS s
LEFT JOIN inside AS i ON i.run_id = s.run_id AND i.skill_invocation_id = s.skill_invocation_id
WHERE s.category = 'skill_invocation';

CREATE OR REPLACE VIEW skill_invocations AS SELECT * FROM skill_invocations_for_run(NULL);

CREATE OR REPLACE MACRO steps_for_run(rid) AS TABLE
WITH cs AS MATERIALIZED (
    SELECT * FROM oa_priced(rid)
),
inside AS (
    SELECT
        run_id, step_id,
        count(*) FILTER (WHERE category = 'skill_invocation') AS skill_invocations,
        count(*) FILTER (WHERE category = 'verifier_result' AND verifier_outcome = 'failed')
            AS verifier_failures,
        count(*) FILTER (WHERE is_error_origin) AS errors,
        oa_items_inside(category, nested_call, guard_outcome, input_tokens, output_tokens, cost_usd) AS t
    FROM cs
    WHERE step_id IS NOT NULL AND category NOT IN ('step', 'flow_run')
    GROUP BY run_id, step_id
)
SELECT
    s.run_id, s.step_id, s.parent_step_id, s.step_name, s.iteration, s.agent_name,
    s.trace_id, s.span_id, s.parent_span_id, s.span_name, s.convention,
    s.start_time, s.end_time, s.duration_ms, s.status_code, s.is_error, s.error_type,
    coalesce(i.skill_invocations, 0) AS skill_invocations,
    coalesce(i.t.provider_calls, 0) AS provider_calls,
    coalesce(i.t.tool_invocations, 0) AS tool_invocations,
    coalesce(i.t.guard_blocks, 0) AS guard_blocks,
    coalesce(i.verifier_failures, 0) AS verifier_failures,
    coalesce(i.errors, 0) AS errors,
    i.t.input_tokens, i.t.output_tokens, i.t.cost_usd,
    s.service_name
FROM cs AS s
LEFT JOIN inside AS i ON i.run_id = s.run_id AND i.step_id = s.step_id
WHERE s.category = 'step';

CREATE OR REPLACE VIEW steps AS SELECT * FROM steps_for_run(NULL);
