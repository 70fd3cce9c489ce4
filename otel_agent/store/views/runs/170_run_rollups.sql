-- run_rollups: one row per run, its own figures plus the work it delegated to other runs (multi-process runs).
-- Run B is delegated by run A when
--   * a span of B has its parent span in A (a remote parent: the child process carries the trace context but
--     names its own run with otel_agent.run.id), or
--   * a span of B links to a span of A (a child trace started for the work, OTLP span links).
-- Both are read from stored ids only (no timestamps, no names). Delegation is followed transitively (at most
-- 16 levels; a cycle stops where it closes). The rollup_* columns of A add the own figures of every run A
-- delegated to, directly or not, each such run once; delegated_by_run_id names the run that delegated this one
-- (the earliest edge when several do), so a total over runs counts delegated work once by summing own figures
-- (runs), or rollup figures of the runs with delegated_by_run_id NULL.
CREATE OR REPLACE VIEW run_rollups AS
WITH RECURSIVE
c AS MATERIALIZED (
    SELECT trace_id, span_id, parent_span_id, run_id, start_time FROM classified_spans
),
edges AS MATERIALIZED (
    SELECT p.run_id AS parent_run_id, ch.run_id AS child_run_id, min(ch.start_time) AS first_at
    FROM c AS ch
    JOIN c AS p ON p.trace_id = ch.trace_id AND p.span_id = ch.parent_span_id
    WHERE p.run_id <> ch.run_id
    GROUP BY ALL
    UNION ALL
    SELECT p.run_id, ch.run_id, min(ch.start_time)
    FROM span_links AS l
    JOIN c AS ch ON ch.trace_id = l.trace_id AND ch.span_id = l.span_id
    JOIN c AS p ON p.trace_id = l.linked_trace_id AND p.span_id = l.linked_span_id
    WHERE p.run_id <> ch.run_id
    GROUP BY ALL
),
direct AS (
    SELECT parent_run_id, child_run_id, min(first_at) AS first_at FROM edges GROUP BY ALL
),
walk(root_run_id, run_id, path, depth) AS (
    SELECT parent_run_id, child_run_id, [parent_run_id, child_run_id], 1 FROM direct
    UNION ALL
    SELECT w.root_run_id, d.child_run_id, list_append(w.path, d.child_run_id), w.depth + 1
    FROM walk AS w
    JOIN direct AS d ON d.parent_run_id = w.run_id
    WHERE w.depth < 16 AND NOT list_contains(w.path, d.child_run_id)
),
descendants AS (
    SELECT DISTINCT root_run_id, run_id FROM walk WHERE run_id <> root_run_id
),
r AS (
    SELECT run_id, provider_calls, tool_invocations, input_tokens, output_tokens, total_tokens, cost_usd,
           unpriced_calls, errors
    FROM runs
),
delegated AS (
    SELECT
        d.root_run_id AS run_id,
        count(*) AS delegated_runs,
        CAST(sum(x.provider_calls) AS BIGINT) AS provider_calls,
        CAST(sum(x.tool_invocations) AS BIGINT) AS tool_invocations,
        CAST(sum(x.input_tokens) AS BIGINT) AS input_tokens,
        CAST(sum(x.output_tokens) AS BIGINT) AS output_tokens,
        CAST(sum(x.total_tokens) AS BIGINT) AS total_tokens,
        fsum(x.cost_usd) AS cost_usd,
        CAST(sum(x.unpriced_calls) AS BIGINT) AS unpriced_calls,
        CAST(sum(x.errors) AS BIGINT) AS errors
    FROM descendants AS d
    JOIN r AS x ON x.run_id = d.run_id
    GROUP BY d.root_run_id
),
parents AS (
    SELECT child_run_id AS run_id, arg_min(parent_run_id, (first_at, parent_run_id)) AS delegated_by_run_id
    FROM direct
    GROUP BY child_run_id
)
SELECT
    r.run_id,
    p.delegated_by_run_id,
    coalesce(d.delegated_runs, 0) AS delegated_runs,
    r.provider_calls, r.input_tokens, r.output_tokens, r.cost_usd, r.errors,
    r.provider_calls + coalesce(d.provider_calls, 0) AS rollup_provider_calls,
    r.tool_invocations + coalesce(d.tool_invocations, 0) AS rollup_tool_invocations,
    CASE WHEN r.input_tokens IS NOT NULL OR d.input_tokens IS NOT NULL
         THEN coalesce(r.input_tokens, 0) + coalesce(d.input_tokens, 0) END AS rollup_input_tokens,
    CASE WHEN r.output_tokens IS NOT NULL OR d.output_tokens IS NOT NULL
         THEN coalesce(r.output_tokens, 0) + coalesce(d.output_tokens, 0) END AS rollup_output_tokens,
    CASE WHEN r.total_tokens IS NOT NULL OR d.total_tokens IS NOT NULL
         THEN coalesce(r.total_tokens, 0) + coalesce(d.total_tokens, 0) END AS rollup_total_tokens,
    CASE WHEN r.cost_usd IS NOT NULL OR d.cost_usd IS NOT NULL
         THEN coalesce(r.cost_usd, 0) + coalesce(d.cost_usd, 0) END AS rollup_cost_usd,
    r.unpriced_calls + coalesce(d.unpriced_calls, 0) AS rollup_unpriced_calls,
    r.errors + coalesce(d.errors, 0) AS rollup_errors
FROM r
LEFT JOIN delegated AS d ON d.run_id = r.run_id
LEFT JOIN parents AS p ON p.run_id = r.run_id;
