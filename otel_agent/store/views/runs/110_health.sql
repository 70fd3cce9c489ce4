-- Health over a time window: provider_health_between(t0, t1), skill_health_between(t0, t1),
-- tool_usage_between(t0, t1) count the spans that started in [t0, t1) (either bound may be NULL: open);
-- the views provider_health, skill_health, tool_usage are the same over all time. These read the classified
-- spans without the hierarchy walk (they do not need run/step/skill placement).

CREATE OR REPLACE MACRO oa_in_window(t, t0, t1) AS
    (t0 IS NULL OR t >= CAST(t0 AS TIMESTAMP_NS)) AND (t1 IS NULL OR t < CAST(t1 AS TIMESTAMP_NS));

-- Per provider and model (the model asked for, after any fallback: what served the call).
-- fallbacks_out / fallbacks_in: otel_agent.fallback events moving a call away from / onto this
-- provider+model in the window.
CREATE OR REPLACE MACRO provider_health_between(t0, t1) AS TABLE
WITH calls AS (
    SELECT
        provider,
        coalesce(request_model, response_model) AS model,
        run_id, start_time, duration_ms, is_error, retry_count, input_tokens, output_tokens
    FROM oa_classified(NULL)
    WHERE category = 'provider_call' AND NOT nested_call AND oa_in_window(start_time, t0, t1)
),
stats AS (
    SELECT
        provider, model,
        count(*) AS calls,
        count(DISTINCT run_id) AS runs,
        count(*) FILTER (WHERE is_error) AS errors,
        coalesce(sum(retry_count), 0) AS retries,
        quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
        quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
        avg(duration_ms) AS avg_latency_ms,
        sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens,
        min(start_time) AS first_call_at,
        max(start_time) AS last_call_at
    FROM calls
    GROUP BY provider, model
),
fallback_events AS (
    SELECT
        lower(attributes->>'otel_agent.fallback.from_provider') AS from_provider,
        attributes->>'otel_agent.fallback.from_model' AS from_model,
        lower(attributes->>'otel_agent.fallback.to_provider') AS to_provider,
        attributes->>'otel_agent.fallback.to_model' AS to_model
    FROM (
        SELECT DISTINCT ON (trace_id, span_id, event_index) attributes, time
        FROM span_events
        WHERE name = 'otel_agent.fallback'
    )
    WHERE oa_in_window(time, t0, t1)
),
outs AS (
    SELECT from_provider AS provider, from_model AS model, count(*) AS fallbacks_out
    FROM fallback_events GROUP BY ALL
),
ins AS (
    SELECT to_provider AS provider, to_model AS model, count(*) AS fallbacks_in
    FROM fallback_events GROUP BY ALL
),
keys AS (
    SELECT provider, model FROM stats
    UNION SELECT provider, model FROM outs
    UNION SELECT provider, model FROM ins
)
SELECT
    k.provider,
    k.model,
    coalesce(s.calls, 0) AS calls,
    coalesce(s.runs, 0) AS runs,
    coalesce(s.errors, 0) AS errors,
    CASE WHEN s.calls > 0 THEN s.errors / s.calls END AS error_rate,
    coalesce(s.retries, 0) AS retries,
    coalesce(o.fallbacks_out, 0) AS fallbacks_out,
    coalesce(i.fallbacks_in, 0) AS fallbacks_in,
    s.p50_latency_ms, s.p95_latency_ms, s.avg_latency_ms,
    s.input_tokens, s.output_tokens,
    s.first_call_at, s.last_call_at
FROM keys AS k
LEFT JOIN stats AS s ON s.provider IS NOT DISTINCT FROM k.provider AND s.model IS NOT DISTINCT FROM k.model
LEFT JOIN outs AS o ON o.provider IS NOT DISTINCT FROM k.provider AND o.model IS NOT DISTINCT FROM k.model
LEFT JOIN ins AS i ON i.provider IS NOT DISTINCT FROM k.provider AND i.model IS NOT DISTINCT FROM k.model;

CREATE OR REPLACE VIEW provider_health AS SELECT * FROM provider_health_between(NULL, NULL);

-- Per skill name and version.
CREATE OR REPLACE MACRO skill_health_between(t0, t1) AS TABLE
SELECT
    skill_name,
    skill_version,
    skill_name || '@' || coalesce(skill_version, '') AS skill_ref,
    count(*) AS invocations,
    count(DISTINCT run_id) AS runs,
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    quantile_cont(duration_ms, 0.5) AS p50_duration_ms,
    quantile_cont(duration_ms, 0.95) AS p95_duration_ms,
    avg(duration_ms) AS avg_duration_ms,
    min(start_time) AS first_invocation_at,
    max(start_time) AS last_invocation_at
FROM oa_classified(NULL)
WHERE category = 'skill_invocation' AND oa_in_window(start_time, t0, t1)
GROUP BY skill_name, skill_version;

CREATE OR REPLACE VIEW skill_health AS SELECT * FROM skill_health_between(NULL, NULL);

-- Per tool name and tool provider.
CREATE OR REPLACE MACRO tool_usage_between(t0, t1) AS TABLE
SELECT
    tool_name,
    tool_provider,
    count(*) AS calls,
    count(DISTINCT run_id) AS runs,
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    coalesce(sum(retry_count), 0) AS retries,
    quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
    quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
    avg(duration_ms) AS avg_latency_ms,
    sum(reported_cost_usd) AS cost_usd,
    min(start_time) AS first_call_at,
    max(start_time) AS last_call_at
FROM oa_classified(NULL)
WHERE category = 'tool_invocation' AND oa_in_window(start_time, t0, t1)
GROUP BY tool_name, tool_provider;

CREATE OR REPLACE VIEW tool_usage AS SELECT * FROM tool_usage_between(NULL, NULL);
