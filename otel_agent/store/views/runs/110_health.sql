-- Health over a time window: provider_health_between(t0, t1), skill_health_between(t0, t1),
-- tool_usage_between(t0, t1) count the spans that started in [t0, t1) (either bound may be NULL: open);
-- the views provider_health, skill_health, tool_usage are the same over all time. These read the classified
-- spans without resolving runs or the hierarchy (they do not need them): they filter the normalised rows by
-- category first and deduplicate only what they keep.

CREATE OR REPLACE MACRO oa_in_window(t, t0, t1) AS
    (t0 IS NULL OR t >= CAST(t0 AS TIMESTAMP_NS)) AND (t1 IS NULL OR t < CAST(t1 AS TIMESTAMP_NS));

-- oa_health_facts_computed(): what the three health views count, one row per fact, computed from raw: each
-- provider call (not one nested in another provider call: the same request recorded twice, whose usage fills
-- what the outer call lacks), skill invocation and tool invocation (not one directly inside a tool span) as its
-- latest stored version, and each otel_agent.fallback span event. Every fact depends on its own trace only, so
-- the maintained state (store/maintained.py) keeps these rows per trace in the table health_facts; the views
-- aggregate oa_health_facts(), which reads that table once the state has caught up (store/maintenance/
-- runs_view.sql) and this computation until then, so a window costs the facts in it, not the store.
--   kind 'provider_call': key1 provider, key2 model (the model asked for, after any fallback: what served it)
--   kind 'skill_invocation': key1 skill name, key2 skill version
--   kind 'tool_invocation': key1 tool name, key2 tool provider
--   kind 'fallback': key1/key2 the provider/model moved away from, key3/key4 the one moved onto
-- t is the start time (the event time for a fallback): the time the views' windows apply to.
CREATE OR REPLACE MACRO oa_health_facts_computed() AS TABLE
WITH n AS MATERIALIZED (
    -- materialised before filtering: a filter pushed into the normalisation would parse the JSON once per
    -- attribute it reads (the console's health_scope.sql hands in these columns pre-filtered)
    SELECT trace_id, span_id, parent_span_id, name, start_time, end_time, received_at, duration_ns, status_code,
           attr_error_type, base_category, provider, request_model, response_model, retry_count, input_tokens,
           output_tokens, skill_name, skill_version, attr_tool_name, tool_provider, reported_cost_usd, mcp_method,
           jsonrpc_request_id, in_progress
    FROM oa_normalised_all(NULL)
),
-- each category's latest version of each span (a re-sent span may have changed category: each keeps its own)
k AS MATERIALIZED (
    SELECT * EXCLUDE (end_time, received_at, in_progress), oa_ms(duration_ns) AS duration_ms,
           (status_code = 'ERROR' OR attr_error_type IS NOT NULL) AS is_error
    FROM n
    -- work in progress (a pending span) is counted when it has ended
    WHERE base_category IN ('provider_call', 'skill_invocation', 'tool_invocation') AND NOT in_progress
    QUALIFY row_number() OVER (PARTITION BY base_category, trace_id, span_id
                               ORDER BY end_time DESC, received_at DESC) = 1
),
pc AS (SELECT * FROM k WHERE base_category = 'provider_call'),
nested_usage AS (
    SELECT
        trace_id, parent_span_id,
        CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens
    FROM pc
    WHERE parent_span_id IS NOT NULL
    GROUP BY trace_id, parent_span_id
),
tools AS (SELECT * FROM k WHERE base_category = 'tool_invocation'),
-- an MCP tools/call whose server span of the same call (its child, same JSON-RPC request id) is in error: the
-- client's counted fact is in error too (the tool result's isError; as classified_spans' answered_in_error)
answered_in_error AS (
    SELECT DISTINCT trace_id, parent_span_id AS span_id, jsonrpc_request_id
    FROM tools
    WHERE is_error AND mcp_method = 'tools/call' AND parent_span_id IS NOT NULL AND jsonrpc_request_id IS NOT NULL
)
SELECT
    'provider_call' AS kind, c.trace_id, c.span_id, CAST(NULL AS UINTEGER) AS event_index, c.start_time AS t,
    c.provider AS key1, coalesce(c.request_model, c.response_model) AS key2,
    CAST(NULL AS VARCHAR) AS key3, CAST(NULL AS VARCHAR) AS key4,
    c.duration_ms, c.is_error, CAST(c.retry_count AS BIGINT) AS retries,
    coalesce(c.input_tokens, u.input_tokens) AS input_tokens,
    coalesce(c.output_tokens, u.output_tokens) AS output_tokens,
    CAST(NULL AS DOUBLE) AS cost_usd
FROM pc AS c
LEFT JOIN nested_usage AS u ON u.trace_id = c.trace_id AND u.parent_span_id = c.span_id
ANTI JOIN pc AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
UNION ALL
SELECT
    'skill_invocation', trace_id, span_id, NULL, start_time, skill_name, skill_version, NULL, NULL,
    duration_ms, is_error, NULL, NULL, NULL, NULL
FROM k
WHERE base_category = 'skill_invocation'
UNION ALL
-- as in tool_invocations: a tool span directly inside a tool span is the same invocation recorded twice
SELECT
    'tool_invocation', c.trace_id, c.span_id, NULL, c.start_time, coalesce(c.attr_tool_name, c.name),
    c.tool_provider, NULL, NULL, c.duration_ms, c.is_error OR a.span_id IS NOT NULL,
    CAST(c.retry_count AS BIGINT), NULL, NULL, c.reported_cost_usd
FROM tools AS c
LEFT JOIN answered_in_error AS a ON a.trace_id = c.trace_id AND a.span_id = c.span_id
    AND a.jsonrpc_request_id = c.jsonrpc_request_id AND c.mcp_method = 'tools/call'
ANTI JOIN tools AS p ON p.trace_id = c.trace_id AND p.span_id = c.parent_span_id
UNION ALL
SELECT
    'fallback', trace_id, span_id, event_index, time,
    lower(attributes->>'otel_agent.fallback.from_provider'), attributes->>'otel_agent.fallback.from_model',
    lower(attributes->>'otel_agent.fallback.to_provider'), attributes->>'otel_agent.fallback.to_model',
    NULL, NULL, NULL, NULL, NULL, NULL
FROM span_events
WHERE name = 'otel_agent.fallback'
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, event_index ORDER BY time) = 1;

-- oa_health_facts(): the facts the health views aggregate (see above). Replaced by a read of the maintained table
-- while the state is current (store/maintenance/runs_view.sql), put back by query_time_views.sql.
CREATE OR REPLACE MACRO oa_health_facts() AS TABLE
SELECT * EXCLUDE (span_id, event_index) FROM oa_health_facts_computed();

-- Per provider and model (the model asked for, after any fallback: what served the call).
-- fallbacks_out / fallbacks_in: otel_agent.fallback events moving a call away from / onto this
-- provider+model in the window.
CREATE OR REPLACE MACRO provider_health_between(t0, t1) AS TABLE
WITH f AS MATERIALIZED (
    SELECT * FROM oa_health_facts() WHERE kind IN ('provider_call', 'fallback') AND oa_in_window(t, t0, t1)
),
stats AS (
    SELECT
        key1 AS provider, key2 AS model,
        count(*) AS calls,
        count(*) FILTER (WHERE is_error) AS errors,
        coalesce(CAST(sum(retries) AS BIGINT), 0) AS retries,
        quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
        quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
        avg(duration_ms) AS avg_latency_ms,
        CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
        min(t) AS first_call_at,
        max(t) AS last_call_at
    FROM f
    WHERE kind = 'provider_call'
    GROUP BY key1, key2
),
outs AS (
    SELECT key1 AS provider, key2 AS model, count(*) AS fallbacks_out FROM f WHERE kind = 'fallback' GROUP BY ALL
),
ins AS (
    SELECT key3 AS provider, key4 AS model, count(*) AS fallbacks_in FROM f WHERE kind = 'fallback' GROUP BY ALL
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
    key1 AS skill_name,
    key2 AS skill_version,
    key1 || '@' || coalesce(key2, '') AS skill_ref,
    count(*) AS invocations,
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    quantile_cont(duration_ms, 0.5) AS p50_duration_ms,
    quantile_cont(duration_ms, 0.95) AS p95_duration_ms,
    avg(duration_ms) AS avg_duration_ms,
    min(t) AS first_invocation_at,
    max(t) AS last_invocation_at
FROM oa_health_facts()
WHERE kind = 'skill_invocation' AND oa_in_window(t, t0, t1)
GROUP BY key1, key2;

CREATE OR REPLACE VIEW skill_health AS SELECT * FROM skill_health_between(NULL, NULL);

-- Per tool name and tool provider.
CREATE OR REPLACE MACRO tool_usage_between(t0, t1) AS TABLE
SELECT
    key1 AS tool_name,
    key2 AS tool_provider,
    count(*) AS calls,
    count(*) FILTER (WHERE is_error) AS errors,
    count(*) FILTER (WHERE is_error) / count(*) AS error_rate,
    coalesce(CAST(sum(retries) AS BIGINT), 0) AS retries,
    quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
    quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
    avg(duration_ms) AS avg_latency_ms,
    fsum(cost_usd) AS cost_usd,
    min(t) AS first_call_at,
    max(t) AS last_call_at
FROM oa_health_facts()
WHERE kind = 'tool_invocation' AND oa_in_window(t, t0, t1)
GROUP BY key1, key2;

CREATE OR REPLACE VIEW tool_usage AS SELECT * FROM tool_usage_between(NULL, NULL);
