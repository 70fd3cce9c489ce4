-- run_metrics: long form (run_id, metric, value, unit, labels), one row per run, metric and labels. Metric names
-- follow the design (seed 000 "Derived metrics"): cost.*, usage.*, reliability.*, latency.* (labels NULL), and
-- the proxy's proxy_* metrics, one row per client / provider / model the run's proxy requests went to (labels:
-- a JSON object naming them; proxy_fallback_count per from / to provider and status). The run's figures
-- (oa_runs_in, 080_runs.sql) and its proxy requests (oa_proxy_requests_in, 065_proxy.sql) are read from one
-- priced copy of its spans (oa_priced_in): the classification is planned once.
-- The rows come in two parts, so that the maintained state (store/maintenance/step_apply.sql, step_proxy.sql) keeps
-- them from what a step computes anyway: oa_run_metrics_long_in (from a run's row, oa_runs_in) and
-- oa_run_metrics_proxy_in (from its priced spans); oa_run_metrics_base_computed puts them together from raw.
-- This file defines those rows (oa_run_metrics_base_for_run); the public run_metrics_for_run(rid) and run_metrics
-- add seed 000's quality.* family to them in views/evidence/098_run_metrics.sql, since the quality rows read the
-- evidence views, created after this folder (DuckDB binds a macro's body when it is created).

-- oa_metric_unit(metric): a run metric's unit, by its name.
CREATE OR REPLACE MACRO oa_metric_unit(metric) AS
    CASE
        WHEN metric LIKE 'cost.%usd' OR metric LIKE '%_usd' THEN 'USD'
        WHEN metric LIKE 'latency.%' OR metric LIKE '%_ms' THEN 'ms'
        WHEN metric LIKE 'usage.tokens.%' OR metric LIKE 'proxy_tokens_%' THEN '{token}'
        ELSE '{count}'
    END;

-- oa_run_metrics_long_in(runs_source): the cost.*, usage.*, reliability.* and latency.* rows (labels NULL) of each
-- run row in the relation named `runs_source` (rows of oa_runs_in).
CREATE OR REPLACE MACRO oa_run_metrics_long_in(runs_source) AS TABLE
SELECT
    r.run_id,
    unnest([
        {'metric': 'cost.total_usd', 'value': CAST(r.cost_usd AS DOUBLE)},
        {'metric': 'cost.unpriced_calls', 'value': CAST(r.unpriced_calls AS DOUBLE)},
        {'metric': 'usage.steps', 'value': CAST(r.steps AS DOUBLE)},
        {'metric': 'usage.provider_calls', 'value': CAST(r.provider_calls AS DOUBLE)},
        {'metric': 'usage.tool_invocations', 'value': CAST(r.tool_invocations AS DOUBLE)},
        {'metric': 'usage.skill_invocations', 'value': CAST(r.skill_invocations AS DOUBLE)},
        {'metric': 'usage.tokens.input', 'value': CAST(coalesce(r.input_tokens, 0) AS DOUBLE)},
        {'metric': 'usage.tokens.output', 'value': CAST(coalesce(r.output_tokens, 0) AS DOUBLE)},
        {'metric': 'usage.tokens.cache_read', 'value': CAST(coalesce(r.cache_read_tokens, 0) AS DOUBLE)},
        {'metric': 'usage.tokens.reasoning', 'value': CAST(coalesce(r.reasoning_tokens, 0) AS DOUBLE)},
        {'metric': 'reliability.guard_blocks', 'value': CAST(r.guard_blocks AS DOUBLE)},
        {'metric': 'reliability.retry_count', 'value': CAST(r.retries AS DOUBLE)},
        {'metric': 'reliability.fallback_count', 'value': CAST(r.fallbacks AS DOUBLE)},
        {'metric': 'reliability.errors', 'value': CAST(r.errors AS DOUBLE)},
        {'metric': 'reliability.verifier_failures', 'value': CAST(r.verifier_failures AS DOUBLE)},
        {'metric': 'latency.total_ms', 'value': CAST(r.duration_ms AS DOUBLE)},
        {'metric': 'latency.provider_p50_ms', 'value': CAST(r.provider_p50_ms AS DOUBLE)},
        {'metric': 'latency.provider_p95_ms', 'value': CAST(r.provider_p95_ms AS DOUBLE)},
        {'metric': 'latency.tool_p50_ms', 'value': CAST(r.tool_p50_ms AS DOUBLE)},
        {'metric': 'latency.tool_p95_ms', 'value': CAST(r.tool_p95_ms AS DOUBLE)}
    ], recursive := true),
    CAST(NULL AS VARCHAR) AS labels
FROM query_table(runs_source) AS r;

-- oa_run_metrics_proxy_in(priced_source, rid): the proxy_* rows (labels: a JSON object) of the runs whose priced spans
-- are in the relation named `priced_source` (rows of oa_priced_in).
CREATE OR REPLACE MACRO oa_run_metrics_proxy_in(priced_source, rid) AS TABLE
WITH pr AS MATERIALIZED (
    SELECT trace_id, span_id, run_id, client, provider, model, duration_ms, input_tokens, output_tokens, cost_usd,
           stream_chunks, is_error
    FROM oa_proxy_requests_in(priced_source, rid)
),
proxy AS (
    SELECT
        run_id,
        unnest([
            {'metric': 'proxy_requests', 'value': CAST(count(*) AS DOUBLE)},
            {'metric': 'proxy_request_duration_ms', 'value': CAST(sum(duration_ms) AS DOUBLE)},
            {'metric': 'proxy_tokens_input', 'value': CAST(coalesce(sum(input_tokens), 0) AS DOUBLE)},
            {'metric': 'proxy_tokens_output', 'value': CAST(coalesce(sum(output_tokens), 0) AS DOUBLE)},
            {'metric': 'proxy_cost_usd', 'value': CAST(fsum(cost_usd) AS DOUBLE)},
            {'metric': 'proxy_stream_chunks', 'value': CAST(coalesce(sum(stream_chunks), 0) AS DOUBLE)}
        ], recursive := true),
        CAST(json_object('client', client, 'provider', provider, 'model', model) AS VARCHAR) AS labels
    FROM pr
    GROUP BY run_id, client, provider, model
),
fallbacks AS (
    SELECT
        pr.run_id,
        'proxy_fallback_count' AS metric,
        CAST(count(*) AS DOUBLE) AS value,
        CAST(json_object('from_provider', e.from_provider, 'to_provider', e.to_provider,
                         'status', oa_fallback_status(e.recorded_status, e.followed, pr.is_error)) AS VARCHAR)
            AS labels
    FROM oa_fallback_events_in('pr') AS e
    JOIN pr ON pr.trace_id = e.trace_id AND pr.span_id = e.span_id
    GROUP BY ALL
)
SELECT run_id, metric, value, labels FROM proxy
UNION ALL SELECT run_id, metric, value, labels FROM fallbacks;

-- oa_run_metrics_base_computed(rid): the rows computed from raw spans.
CREATE OR REPLACE MACRO oa_run_metrics_base_computed(rid) AS TABLE
WITH classified AS (
    -- what oa_runs_in, oa_proxy_requests_in and the pricing read, from oa_classified: a run's metrics depend on no
    -- step or skill placement, so its recursive walks are not planned (as in runs_for_run). step_id is NULL
    -- here: oa_proxy_requests_in passes it through and `pr` below does not read it.
    SELECT run_id, trace_id, span_id, parent_span_id, CAST(NULL AS VARCHAR) AS step_id, span_name, category,
           convention, run_id_source, parent_found, nested_call, operation, start_time, end_time, duration_ms,
           workflow_name, agent_name, conversation_id, session_id, service_name, status_code, is_error,
           is_error_origin, error_type, guard_outcome, verifier_outcome, retry_count, fallback_count,
           fallback_from_provider, fallback_from_model, provider, request_model, response_model, input_tokens,
           output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens, total_tokens,
           reported_cost_usd, genai_ext, budget_max_model_calls, budget_max_tool_calls, budget_max_cost_usd,
           budget_exceeded, budget_exceeded_limits
    FROM oa_classified(rid)
    WHERE rid IS NULL OR run_id = rid
),
cs AS (SELECT * FROM oa_priced_in('classified')),
r AS (SELECT * FROM oa_runs_in('cs'))
SELECT run_id, metric, value, oa_metric_unit(metric) AS unit, labels
FROM (
    SELECT run_id, metric, value, labels FROM oa_run_metrics_long_in('r')
    UNION ALL SELECT run_id, metric, value, labels FROM oa_run_metrics_proxy_in('cs', rid)
);

-- oa_run_metrics_base_for_run(rid): computed from raw here; over the maintained rows once a receiver's state has
-- caught up (store/maintenance/runs_view.sql; query_time_views.sql puts this one back).
CREATE OR REPLACE MACRO oa_run_metrics_base_for_run(rid) AS TABLE SELECT * FROM oa_run_metrics_base_computed(rid);
