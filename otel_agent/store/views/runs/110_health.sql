-- Health over a time window: provider_health_between(t0, t1), skill_health_between(t0, t1),
-- tool_usage_between(t0, t1) count the spans that started in [t0, t1) (either bound may be NULL: open);
-- the views provider_health, skill_health, tool_usage are the same over all time. These read the classified
-- spans without resolving runs or the hierarchy (they do not need them): they filter the normalised rows by
-- category first and deduplicate only what they keep.

CREATE OR REPLACE MACRO oa_in_window(t, t0, t1) AS
    (t0 IS NULL OR t >= CAST(t0 AS TIMESTAMP_NS)) AND (t1 IS NULL OR t < CAST(t1 AS TIMESTAMP_NS));

-- Per provider and model (the model asked for, after any fallback: what served the call).
-- fallbacks_out / fallbacks_in: otel_agent.fallback events moving a call away from / onto this
-- provider+model in the window.
CREATE OR REPLACE MACRO provider_health_between(t0, t1) AS TABLE
WITH n AS MATERIALIZED (
    -- materialised before filtering: a filter pushed into the normalisation would parse the JSON once per
    -- attribute it reads
    SELECT
        trace_id, span_id, parent_span_id, provider, request_model, response_model, start_time, end_time,
        received_at, oa_ms(duration_ns) AS duration_ms,
        (status_code = 'ERROR' OR attr_error_type IS NOT NULL) AS is_error,
        retry_count, input_tokens, output_tokens, base_category
    FROM oa_normalised_all(NULL)
),
pc AS MATERIALIZED (
    SELECT * EXCLUDE (end_time, received_at, base_category)
    FROM n
    WHERE base_category = 'provider_call'
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
),
-- as in provider_calls: a call nested in another provider call is the same request recorded twice; it is
-- not counted, and its usage fills what the outer call lacks
nested_usage AS (
    SELECT
        trace_id, parent_span_id,
        CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens
    FROM pc
    WHERE parent_span_id IS NOT NULL
    GROUP BY trace_id, parent_span_id
),
calls AS (
    SELECT
        c.provider,
        coalesce(c.request_model, c.response_model) AS model,
        c.start_time, c.duration_ms, c.is_error, c.retry_count,
        coalesce(c.input_tokens, n.input_tokens) AS input_tokens,
        coalesce(c.output_tokens, n.output_tokens) AS output_tokens
    FROM pc AS c
    LEFT JOIN nested_usage AS n ON n.trace_id = c.trace_id AND n.parent_span_id = c.span_id
    ANTI JOIN pc AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
    WHERE oa_in_window(c.start_time, t0, t1)
),
stats AS (
    SELECT
        provider, model,
        count(*) AS calls,
        count(*) FILTER (WHERE is_error) AS errors,
        coalesce(CAST(sum(retry_count) AS BIGINT), 0) AS retries,
        quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
        quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
        avg(duration_ms) AS avg_latency_ms,
        CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
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
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    quantile_cont(duration_ms, 0.5) AS p50_duration_ms,
    quantile_cont(duration_ms, 0.95) AS p95_duration_ms,
    avg(duration_ms) AS avg_duration_ms,
    min(start_time) AS first_invocation_at,
    max(start_time) AS last_invocation_at
FROM (
    WITH n AS MATERIALIZED (
        SELECT trace_id, span_id, end_time, received_at, base_category, skill_name, skill_version, start_time,
               oa_ms(duration_ns) AS duration_ms, (status_code = 'ERROR' OR attr_error_type IS NOT NULL) AS is_error
        FROM oa_normalised_all(NULL)
    )
    SELECT skill_name, skill_version, start_time, duration_ms, is_error
    FROM n
    WHERE base_category = 'skill_invocation' AND oa_in_window(start_time, t0, t1)
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
)
GROUP BY skill_name, skill_version;

CREATE OR REPLACE VIEW skill_health AS SELECT * FROM skill_health_between(NULL, NULL);

-- Per tool name and tool provider.
CREATE OR REPLACE MACRO tool_usage_between(t0, t1) AS TABLE
SELECT
    tool_name,
    tool_provider,
    count(*) AS calls,
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    coalesce(CAST(sum(retry_count) AS BIGINT), 0) AS retries,
    quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
    quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
    avg(duration_ms) AS avg_latency_ms,
    fsum(reported_cost_usd) AS cost_usd,
    min(start_time) AS first_call_at,
    max(start_time) AS last_call_at
FROM (
    WITH n AS MATERIALIZED (
        SELECT trace_id, span_id, parent_span_id, end_time, received_at, base_category,
               coalesce(attr_tool_name, name) AS tool_name,
               tool_provider, start_time, oa_ms(duration_ns) AS duration_ms,
               (status_code = 'ERROR' OR attr_error_type IS NOT NULL) AS is_error, retry_count, reported_cost_usd
        FROM oa_normalised_all(NULL)
    ),
    t AS MATERIALIZED (
        SELECT *
        FROM n
        WHERE base_category = 'tool_invocation'
        QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
    )
    -- as in tool_invocations: a tool span directly inside a tool span is the same invocation recorded twice
    SELECT c.tool_name, c.tool_provider, c.start_time, c.duration_ms, c.is_error, c.retry_count, c.reported_cost_usd
    FROM t AS c
    ANTI JOIN t AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
    WHERE oa_in_window(c.start_time, t0, t1)
)
GROUP BY tool_name, tool_provider;

CREATE OR REPLACE VIEW tool_usage AS SELECT * FROM tool_usage_between(NULL, NULL);
