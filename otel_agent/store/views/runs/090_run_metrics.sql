-- run_metrics: long form (run_id, metric, value, unit), one row per run and metric. Metric names follow the
-- design (seed 000 "Derived metrics"): cost.*, usage.*, reliability.*, latency.*.
CREATE OR REPLACE MACRO run_metrics_for_run(rid) AS TABLE
WITH r AS (
    SELECT * FROM runs_for_run(rid)
),
long AS (
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
        ], recursive := true)
    FROM r
)
SELECT
    run_id,
    metric,
    value,
    CASE
        WHEN metric LIKE 'cost.%usd' THEN 'USD'
        WHEN metric LIKE 'latency.%' THEN 'ms'
        WHEN metric LIKE 'usage.tokens.%' THEN '{token}'
        ELSE '{count}'
    END AS unit
FROM long;

CREATE OR REPLACE VIEW run_metrics AS SELECT * FROM run_metrics_for_run(NULL);
