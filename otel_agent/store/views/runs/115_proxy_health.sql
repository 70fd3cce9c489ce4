-- proxy_health: the proxy's requests per client, provider and model (seed 000: "proxy metrics grouped by client,
-- model, and provider"), over all time; proxy_health_between(t0, t1) counts the requests that started in
-- [t0, t1) (either bound may be NULL: open). Provider and model are what served the request (after any
-- fallback); fallbacks_out / fallbacks_in count the fallback attempts of that client's requests away from /
-- onto the provider+model, fallbacks_failed those of them onto it that failed. Every proxy request counts,
-- nested in an agent's provider call or not (proxy_requests, 065_proxy.sql).
-- oa_proxy_facts_computed(): what proxy_health counts, computed from raw: each proxy request (kind 'request', t
-- its start time) and each fallback attempt of one (kind 'fallback', t the request's start: a window keeps a
-- request's attempts with it). Each row depends on its own trace only, so the maintained state keeps them in the
-- table proxy_facts (store/maintained.py) and oa_proxy_facts() reads that table once the state is current.
CREATE OR REPLACE MACRO oa_proxy_facts_computed() AS TABLE
WITH r AS MATERIALIZED (
    SELECT * FROM proxy_requests_for_run(NULL)
)
SELECT
    'request' AS kind, trace_id, span_id, start_time AS t, client, provider, model, is_error, duration_ms,
    input_tokens, output_tokens, cost_usd, stream, stream_chunks,
    CAST(NULL AS VARCHAR) AS from_provider, CAST(NULL AS VARCHAR) AS from_model,
    CAST(NULL AS VARCHAR) AS to_provider, CAST(NULL AS VARCHAR) AS to_model, CAST(NULL AS VARCHAR) AS status
FROM r
UNION ALL
SELECT
    'fallback', e.trace_id, e.span_id, r.start_time, r.client, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    e.from_provider, e.from_model, e.to_provider, e.to_model,
    oa_fallback_status(e.recorded_status, e.followed, r.is_error)
FROM oa_fallback_events_in('r') AS e
JOIN r ON r.trace_id = e.trace_id AND r.span_id = e.span_id;

-- oa_proxy_facts(): the facts proxy_health aggregates; a read of the maintained table while the state is current
-- (store/maintenance/runs_view.sql).
CREATE OR REPLACE MACRO oa_proxy_facts() AS TABLE SELECT * FROM oa_proxy_facts_computed();

CREATE OR REPLACE MACRO proxy_health_between(t0, t1) AS TABLE
WITH r AS MATERIALIZED (
    SELECT * FROM oa_proxy_facts() WHERE oa_in_window(t, t0, t1)
),
stats AS (
    SELECT
        client, provider, model,
        count(*) AS requests,
        count(*) FILTER (WHERE is_error) AS errors,
        quantile_cont(duration_ms, 0.5) AS p50_latency_ms,
        quantile_cont(duration_ms, 0.95) AS p95_latency_ms,
        avg(duration_ms) AS avg_latency_ms,
        CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
        fsum(cost_usd) AS cost_usd,
        count(*) FILTER (WHERE stream) AS streamed,
        CAST(coalesce(sum(stream_chunks), 0) AS BIGINT) AS stream_chunks,
        min(t) AS first_request_at,
        max(t) AS last_request_at
    FROM r
    WHERE kind = 'request'
    GROUP BY client, provider, model
),
f AS (
    SELECT client, from_provider, from_model, to_provider, to_model, status FROM r WHERE kind = 'fallback'
),
outs AS (
    SELECT client, from_provider AS provider, from_model AS model, count(*) AS fallbacks_out FROM f GROUP BY ALL
),
ins AS (
    SELECT client, to_provider AS provider, to_model AS model, count(*) AS fallbacks_in,
           count(*) FILTER (WHERE status = 'failed') AS fallbacks_failed
    FROM f GROUP BY ALL
),
keys AS (
    SELECT client, provider, model FROM stats
    UNION SELECT client, provider, model FROM outs
    UNION SELECT client, provider, model FROM ins
)
SELECT
    k.client, k.provider, k.model,
    coalesce(s.requests, 0) AS requests,
    coalesce(s.errors, 0) AS errors,
    CASE WHEN s.requests > 0 THEN s.errors / s.requests END AS error_rate,
    s.p50_latency_ms, s.p95_latency_ms, s.avg_latency_ms,
    s.input_tokens, s.output_tokens, s.cost_usd,
    coalesce(s.streamed, 0) AS streamed,
    coalesce(s.stream_chunks, 0) AS stream_chunks,
    coalesce(o.fallbacks_out, 0) AS fallbacks_out,
    coalesce(i.fallbacks_in, 0) AS fallbacks_in,
    coalesce(i.fallbacks_failed, 0) AS fallbacks_failed,
    s.first_request_at, s.last_request_at
FROM keys AS k
LEFT JOIN stats AS s
    ON s.client IS NOT DISTINCT FROM k.client AND s.provider IS NOT DISTINCT FROM k.provider
   AND s.model IS NOT DISTINCT FROM k.model
LEFT JOIN outs AS o
    ON o.client IS NOT DISTINCT FROM k.client AND o.provider IS NOT DISTINCT FROM k.provider
   AND o.model IS NOT DISTINCT FROM k.model
LEFT JOIN ins AS i
    ON i.client IS NOT DISTINCT FROM k.client AND i.provider IS NOT DISTINCT FROM k.provider
   AND i.model IS NOT DISTINCT FROM k.model;

CREATE OR REPLACE VIEW proxy_health AS SELECT * FROM proxy_health_between(NULL, NULL);
