-- How long a running run may go without activity (no span of it started or ended) before runs calls it
-- 'abandoned': 600 s, or what a receiver started with --run-silence-s redefines it as in its store
-- (store/database.py set_run_silence). A constant, so that these views also run over files by hand in any DuckDB
-- (docs/scale.md): no table is read.
CREATE OR REPLACE MACRO oa_run_silence_s() AS 600;

-- A run's status as shown: a run computed as 'running' whose last activity is older than oa_run_silence_s() is
-- 'abandoned' (its process died, or its root span was lost). Applied when read, not when the row is kept (the
-- maintained rows keep 'running': time, not data, turns it).
CREATE OR REPLACE MACRO oa_run_status(status, last_activity_time) AS
    CASE
        WHEN status = 'running'
             AND epoch_ns(last_activity_time) < epoch_ns(get_current_timestamp()) - CAST(oa_run_silence_s() * 1e9 AS BIGINT)
            THEN 'abandoned'
        ELSE status
    END;

-- runs: one row per run. The run-level spans are the run's flow_run spans, ours first, then by start time (some
-- instrumentations emit two: a GenAI invoke_agent root above a framework workflow span). The run span (id,
-- trace, times, budget) is the first of them; the name is the first workflow name any of them carries (else the
-- run span's name); the agent is the run span's own when it is an agent invocation (issue 32), else the first
-- agent step's; the run is 'error' when any run-level span is in error, with the typed error (error.type, an
-- exception) of the first such span, else of where the failure began, else the first such span's guess from its
-- status message. A run holds work (classified_spans.work) or is one of ours in progress: bookkeeping alone (an
-- agent's creation, a lone record) is no run. A run without a run-level span (third-party spans with no agent/workflow root, a broken trace
-- with several roots, or one of ours whose flow_run span has not arrived yet) is described by its earliest root
-- span (a span whose parent is not stored) and is 'error' when any root is in error.
-- A run is 'running' while its run span (else its earliest root) is in progress — announced by a pending span and
-- not stored itself, or stored but with a parent that is not (the trace's root has not ended yet) — or, one of
-- ours, its flow_run span has not arrived; shown as 'abandoned' once it has been silent for oa_run_silence_s()
-- (docs/views-runs.md "Runs in progress"). last_activity_time: the latest start or end of the run's spans;
-- current_step: while running, the step that started last.
--
-- oa_runs_in(source): those rows from the priced spans in relation `source` (a table, view or CTE named by a
-- string; oa_priced's columns), so a macro that needs the runs and other figures of the same priced spans plans
-- the classification once (run_metrics_for_run); runs_for_run(rid) is oa_runs_in over oa_priced(rid).
CREATE OR REPLACE MACRO oa_runs_in(source) AS TABLE
WITH run_span AS (
    SELECT run_id, span_id, trace_id, span_name, convention, agent_name, service_name, start_time, end_time,
           genai_ext.agent_invocation AS agent_invocation, genai_ext.metadata AS metadata,
           genai_ext.in_progress AS announced, parent_span_id IS NOT NULL AND NOT parent_found AS orphan,
           budget_max_model_calls, budget_max_tool_calls, budget_max_cost_usd, budget_exceeded, budget_exceeded_limits
    FROM query_table(source)
    WHERE category = 'flow_run'
    QUALIFY row_number() OVER (
        PARTITION BY run_id ORDER BY convention <> 'otel_agent', start_time, span_id
    ) = 1
),
root_span AS (
    SELECT run_id, trace_id, workflow_name, span_name, agent_name, service_name, convention,
           genai_ext.metadata AS metadata,
           genai_ext.in_progress AS announced, parent_span_id IS NOT NULL AS orphan
    FROM query_table(source)
    WHERE NOT parent_found
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY start_time, end_time DESC, span_id) = 1
),
agg AS (
    SELECT
        run_id,
        min(start_time) AS first_start,
        max(end_time) AS last_end,
        count(*) AS span_count,
        list_sort(list(DISTINCT convention)) AS conventions,
        -- what the run-level spans (else the roots) say between them
        arg_min(workflow_name, run_order)
            FILTER (WHERE category = 'flow_run' AND workflow_name IS NOT NULL) AS run_workflow_name,
        arg_min(agent_name, run_order)
            FILTER (WHERE category = 'flow_run' AND agent_name IS NOT NULL) AS run_agent_name,
        bool_or(is_error) FILTER (WHERE category = 'flow_run') AS run_in_error,
        arg_min(error_type, run_order)
            FILTER (WHERE category = 'flow_run' AND is_error) AS run_error_type,
        arg_min(error_type, run_order)
            FILTER (WHERE category = 'flow_run' AND is_error AND genai_ext.error_typed) AS run_typed_error_type,
        bool_or(is_error) FILTER (WHERE NOT parent_found) AS root_in_error,
        arg_min(error_type, (start_time, span_id)) FILTER (WHERE NOT parent_found AND is_error) AS root_error_type,
        arg_min(error_type, (start_time, span_id))
            FILTER (WHERE NOT parent_found AND is_error AND genai_ext.error_typed) AS root_typed_error_type,
        -- the typed error of where the failure began (the earliest origin with error.type or an exception)
        arg_min(error_type, (start_time, span_id))
            FILTER (WHERE is_error_origin AND genai_ext.error_typed) AS origin_error_type,
        -- spans of work: what makes a run (issue 32; bookkeeping alone — an agent's creation, a lone record — does
        -- not)
        count(*) FILTER (WHERE genai_ext.work) AS work_spans,
        arg_min(genai_ext.metadata, (start_time, span_id)) FILTER (WHERE genai_ext.metadata IS NOT NULL)
            AS any_metadata,
        bool_or(run_id_source = 'attribute') AS has_run_attribute,
        arg_min(agent_name, start_time) FILTER (WHERE category = 'step' AND agent_name IS NOT NULL)
            AS first_agent,
        arg_min(agent_name, start_time) FILTER (WHERE agent_name IS NOT NULL) AS any_agent,
        arg_min(session_ref, start_time) FILTER (WHERE session_ref IS NOT NULL) AS session_id,
        count(*) FILTER (WHERE category = 'step') AS steps,
        arg_max(span_name, (start_time, span_id)) FILTER (WHERE category = 'step') AS latest_step,
        count(*) FILTER (WHERE category = 'skill_invocation') AS skill_invocations,
        count(*) FILTER (WHERE is_call) AS provider_calls,
        count(*) FILTER (WHERE category = 'tool_invocation' AND NOT nested_call) AS tool_invocations,
        count(*) FILTER (WHERE category = 'retrieval' AND NOT nested_call) AS retrievals,
        count(*) FILTER (WHERE category = 'memory') AS memory_operations,
        count(*) FILTER (WHERE category = 'handoff') AS handoffs,
        count(*) FILTER (WHERE category = 'guard_result') AS guard_checks,
        count(*) FILTER (WHERE category = 'guard_result' AND guard_outcome = 'blocked') AS guard_blocks,
        count(*) FILTER (WHERE category = 'verifier_result') AS verifier_results,
        count(*) FILTER (WHERE category = 'verifier_result' AND verifier_outcome = 'failed') AS verifier_failures,
        count(*) FILTER (WHERE is_error_origin) AS errors,
        count(*) FILTER (WHERE is_error AND NOT nested_call) AS spans_in_error,
        coalesce(CAST(sum(retry_count) FILTER (WHERE is_billed) AS BIGINT), 0) AS retries,
        coalesce(CAST(sum(fallback_count) FILTER (WHERE is_call) AS BIGINT), 0) AS fallbacks,
        CAST(sum(input_tokens) FILTER (WHERE is_call) AS BIGINT) AS input_tokens,
        CAST(sum(output_tokens) FILTER (WHERE is_call) AS BIGINT) AS output_tokens,
        CAST(sum(cache_read_tokens) FILTER (WHERE is_call) AS BIGINT) AS cache_read_tokens,
        CAST(sum(cache_creation_tokens) FILTER (WHERE is_call) AS BIGINT) AS cache_creation_tokens,
        CAST(sum(reasoning_tokens) FILTER (WHERE is_call) AS BIGINT) AS reasoning_tokens,
        CAST(sum(total_tokens) FILTER (WHERE is_call) AS BIGINT) AS total_tokens,
        fsum(cost_usd) FILTER (WHERE is_billed) AS cost_usd,  -- NULL: nothing of the run has a known cost
        count(*) FILTER (WHERE is_call AND cost_usd IS NULL) AS unpriced_calls,
        quantile_cont(duration_ms, 0.5) FILTER (WHERE is_call) AS provider_p50_ms,
        quantile_cont(duration_ms, 0.95) FILTER (WHERE is_call) AS provider_p95_ms,
        quantile_cont(duration_ms, 0.5) FILTER (WHERE category = 'tool_invocation') AS tool_p50_ms,
        quantile_cont(duration_ms, 0.95) FILTER (WHERE category = 'tool_invocation') AS tool_p95_ms,
        quantile_cont(genai_ext.time_to_first_chunk_ms, 0.5) FILTER (WHERE is_call) AS provider_ttfc_p50_ms
    FROM (
        SELECT
            *,
            category = 'provider_call' AND NOT nested_call AS is_call,  -- counted once (see provider_calls)
            category IN ('provider_call', 'tool_invocation') AND NOT nested_call AS is_billed,
            (convention <> 'otel_agent', start_time, span_id) AS run_order,  -- which run-level span speaks first
            coalesce(conversation_id, session_id) AS session_ref
        FROM query_table(source)
    )
    GROUP BY run_id
),
joined AS (
    SELECT
        agg.*,
        r.span_id AS run_span_id,
        coalesce(r.trace_id, root.trace_id) AS trace_id,
        coalesce(agg.run_workflow_name, r.span_name, root.workflow_name, root.span_name) AS workflow_name,
        -- the agent at the root names the run when the run span is an agent invocation (issue 32); under a
        -- workflow root, the first agent it ran
        coalesce(CASE WHEN r.convention = 'otel_agent' OR r.agent_invocation THEN r.agent_name END, agg.first_agent,
                 agg.run_agent_name, root.agent_name, agg.any_agent) AS agent_name,
        coalesce(r.metadata, root.metadata, agg.any_metadata) AS metadata,
        coalesce(r.service_name, root.service_name) AS service_name,
        coalesce(r.convention, root.convention) AS convention,
        coalesce(r.start_time, agg.first_start) AS start_time,
        -- a run span in progress ends, so far, at the run's last activity
        CASE WHEN r.announced THEN agg.last_end ELSE coalesce(r.end_time, agg.last_end) END AS end_time,
        CASE
            -- announced and not ended: running; its parent not stored: running unless it failed (a recorded
            -- failure wins over a guess: smolagents never ends a failed run's span)
            WHEN r.span_id IS NOT NULL THEN (
                CASE WHEN r.announced THEN 'running' WHEN agg.run_in_error THEN 'error'
                     WHEN r.orphan THEN 'running' ELSE 'ok' END)
            WHEN agg.has_run_attribute OR root.announced THEN 'running'
            WHEN agg.root_in_error THEN 'error'
            WHEN root.orphan THEN 'running'
            ELSE 'ok'
        END AS status,
        -- a typed error (error.type, an exception) of the run span (else the root), else the origin's, else the
        -- run span's (root's) own guess from its status message (docs/views-runs.md "Errors")
        CASE
            WHEN r.span_id IS NOT NULL AND agg.run_in_error
                THEN coalesce(agg.run_typed_error_type, agg.origin_error_type, agg.run_error_type)
            WHEN r.span_id IS NULL AND agg.root_in_error
                THEN coalesce(agg.root_typed_error_type, agg.origin_error_type, agg.root_error_type)
        END AS error_type,
        r.budget_max_model_calls, r.budget_max_tool_calls, r.budget_max_cost_usd,
        r.budget_exceeded AS attr_budget_exceeded, r.budget_exceeded_limits AS attr_budget_exceeded_limits,
        list_filter([
            CASE WHEN agg.provider_calls > r.budget_max_model_calls THEN 'model_calls' END,
            CASE WHEN agg.tool_invocations > r.budget_max_tool_calls THEN 'tool_calls' END,
            CASE WHEN agg.cost_usd > r.budget_max_cost_usd THEN 'cost_usd' END
        ], lambda x: x IS NOT NULL) AS computed_limits,
        (r.budget_max_model_calls IS NOT NULL OR r.budget_max_tool_calls IS NOT NULL
         OR r.budget_max_cost_usd IS NOT NULL) AS has_budget
    FROM agg
    LEFT JOIN run_span AS r ON r.run_id = agg.run_id
    LEFT JOIN root_span AS root ON root.run_id = agg.run_id
)
SELECT
    run_id, workflow_name, agent_name, session_id, service_name, convention, conventions, trace_id, run_span_id,
    start_time, end_time, oa_ms(epoch_ns(end_time) - epoch_ns(start_time)) AS duration_ms,
    status, error_type,
    steps, skill_invocations, provider_calls, tool_invocations, retrievals, memory_operations, handoffs,
    guard_checks, guard_blocks, verifier_results, verifier_failures, errors, spans_in_error, retries, fallbacks,
    input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens, total_tokens,
    cost_usd, unpriced_calls,
    provider_p50_ms, provider_p95_ms, tool_p50_ms, tool_p95_ms, provider_ttfc_p50_ms,
    budget_max_model_calls, budget_max_tool_calls, budget_max_cost_usd,
    CASE WHEN has_budget THEN coalesce(attr_budget_exceeded, len(computed_limits) > 0) END AS budget_exceeded,
    CASE WHEN has_budget THEN coalesce(attr_budget_exceeded_limits, computed_limits) END AS budget_exceeded_limits,
    span_count,
    metadata,
    last_end AS last_activity_time,
    CASE WHEN status = 'running' THEN latest_step END AS current_step
FROM joined
-- a run holds work, or is one of ours (otel_agent.run.id) whose run span may not have arrived yet
WHERE work_spans > 0 OR has_run_attribute;

-- oa_run_rows(source): the runs rows of the classified spans in relation `source` (oa_classified's columns; a
-- table, view or CTE named by a string): runs_for_run over oa_classified, and the maintained state over the
-- classified spans of the traces it folds again (store/maintenance/step_apply.sql), one SQL for both.
-- It prices the run's classified spans without placing them in steps and skills (oa_priced_in over
-- oa_classified, not oa_priced): no column of a run's row depends on the placement, whose recursive walks are
-- about a third of the operators a run's classification plans (docs/views-runs.md "Performance"). `classified`
-- keeps only what oa_runs_in and the pricing read, so the priced copy oa_priced_in materialises is narrow too.
CREATE OR REPLACE MACRO oa_run_rows(source) AS TABLE
WITH classified AS (
    SELECT run_id, trace_id, span_id, span_name, category, convention, run_id_source, parent_span_id, parent_found, nested_call,
           start_time, end_time, duration_ms, workflow_name, agent_name, conversation_id, session_id, service_name,
           is_error, is_error_origin, error_type, guard_outcome, verifier_outcome, retry_count, fallback_count,
           provider, request_model, response_model, input_tokens, output_tokens, cache_read_tokens,
           cache_creation_tokens, reasoning_tokens, total_tokens, reported_cost_usd, genai_ext,
           budget_max_model_calls, budget_max_tool_calls, budget_max_cost_usd, budget_exceeded, budget_exceeded_limits
    FROM query_table(source)
),
cs AS (SELECT * FROM oa_priced_in('classified'))
SELECT * FROM oa_runs_in('cs');

-- A run computed as 'running' shows as 'abandoned' once silent (oa_run_status, above): turned when
-- read, here and over the maintained rows (store/maintenance/runs_view.sql), which keep 'running' (time and the
-- silence setting, not data, turn it).
CREATE OR REPLACE MACRO runs_for_run(rid) AS TABLE
WITH run_classified AS (
    SELECT * FROM oa_classified(rid) WHERE rid IS NULL OR run_id = rid
)
SELECT * REPLACE (oa_run_status(status, last_activity_time) AS status) FROM oa_run_rows('run_classified');

-- The runs view computed from raw spans at query time. A store written by a receiver replaces it with the
-- maintained rows once they have caught up (store/maintenance/runs_view.sql); shards and live ∪ archive read this.
CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL);
