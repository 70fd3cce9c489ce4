-- sessions: one row per conversation — the runs whose spans carry one gen_ai.conversation.id (or OpenInference
-- session.id): runs.session_id, the first such id of the run by span start time. Runs without one are in no
-- session. cost_usd is NULL when no run of the session has a known cost.
CREATE OR REPLACE VIEW sessions AS
SELECT
    session_id,
    count(*) AS runs,
    count(*) FILTER (WHERE status = 'error') AS failed_runs,
    list_sort(list(DISTINCT agent_name) FILTER (WHERE agent_name IS NOT NULL)) AS agent_names,
    min(start_time) AS first_start,
    max(end_time) AS last_end,
    CAST(sum(provider_calls) AS BIGINT) AS provider_calls,
    CAST(sum(tool_invocations) AS BIGINT) AS tool_invocations,
    CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
    CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
    CAST(sum(total_tokens) AS BIGINT) AS total_tokens,
    fsum(cost_usd) AS cost_usd,
    CAST(sum(unpriced_calls) AS BIGINT) AS unpriced_calls,
    CAST(sum(errors) AS BIGINT) AS errors
FROM runs
WHERE session_id IS NOT NULL
GROUP BY session_id;
