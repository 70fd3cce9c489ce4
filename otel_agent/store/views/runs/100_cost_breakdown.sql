-- cost_breakdown: cost and usage by run, step, skill, item type (provider_call / tool_invocation),
-- provider, model and tool. One row per distinct combination; NULL parts mean "none" (e.g. a call made
-- outside any skill).
CREATE OR REPLACE MACRO cost_breakdown_for_run(rid) AS TABLE
WITH cs AS MATERIALIZED (  -- the columns read below (a narrower copy plans and materialises faster)
    SELECT run_id, step_id, step_name, skill_invocation_id, skill_name, skill_version, category, nested_call,
           provider, tool_provider, request_model, response_model, tool_name, input_tokens, output_tokens,
           cache_read_tokens, cost_usd, cost_source
    FROM oa_priced(rid)
),
names AS (
    SELECT run_id, step_id, any_value(step_name) AS step_name
    FROM cs WHERE category = 'step' GROUP BY run_id, step_id
),
skills AS (
    SELECT run_id, skill_invocation_id, any_value(skill_name || '@' || coalesce(skill_version, '')) AS skill_ref
    FROM cs WHERE category = 'skill_invocation' GROUP BY run_id, skill_invocation_id
)
SELECT
    i.run_id,
    i.step_id,
    n.step_name,
    i.skill_invocation_id,
    s.skill_ref,
    i.category AS item_type,
    CASE WHEN i.category = 'tool_invocation' THEN i.tool_provider ELSE i.provider END AS provider,
    CASE WHEN i.category = 'provider_call' THEN coalesce(i.request_model, i.response_model) END AS model,
    i.tool_name,
    count(*) AS calls,
    CAST(sum(i.input_tokens) AS BIGINT) AS input_tokens,
    CAST(sum(i.output_tokens) AS BIGINT) AS output_tokens,
    CAST(sum(i.cache_read_tokens) AS BIGINT) AS cache_read_tokens,
    fsum(i.cost_usd) AS cost_usd,  -- NULL: nothing in the group has a known cost (see unpriced_calls)
    count(i.cost_usd) AS priced_calls,
    count(*) - count(i.cost_usd) AS unpriced_calls,
    coalesce(list_sort(list(DISTINCT i.cost_source) FILTER (WHERE i.cost_source IS NOT NULL)),
             CAST([] AS VARCHAR[])) AS cost_sources
FROM cs AS i
LEFT JOIN names AS n ON n.run_id = i.run_id AND n.step_id = i.step_id
LEFT JOIN skills AS s ON s.run_id = i.run_id AND s.skill_invocation_id = i.skill_invocation_id
WHERE i.category IN ('provider_call', 'tool_invocation') AND NOT i.nested_call
GROUP BY ALL;

CREATE OR REPLACE VIEW cost_breakdown AS SELECT * FROM cost_breakdown_for_run(NULL);
