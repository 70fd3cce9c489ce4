-- provider_calls, tool_invocations, guard_results, verifier_results: one row per span of that category, with
-- run, step, skill and parent ids for walking run -> step -> skill -> call -> guard with joins.
-- Each is a view over all runs and a macro <view>_for_run(run_id) reading only that run's traces.

-- oa_call_dependencies(rid): a call's data dependencies (seed 001's agent_runs.json; issue 15): the artifacts /
-- records it read and produced (free-form names or ids) and the caller's token estimate (the prompt it used is
-- classified: genai_ext.prompt_name / prompt_version).
-- Parsed here, from the few spans that carry them (a text filter first), so the classification layers stay as
-- they are; deduplicated as oa_span_fields_all(rid, latest := true) is.
CREATE OR REPLACE MACRO oa_call_dependencies(rid) AS TABLE
WITH d AS (
    SELECT trace_id, span_id, end_time, received_at,
           json_transform(attributes,
               '{"otel_agent.call.input_artifacts":["VARCHAR"],"otel_agent.call.output_artifacts":["VARCHAR"],'
                   || '"otel_agent.call.token_estimate":"VARCHAR"}') AS a
    FROM oa_scoped_spans(rid)
    WHERE CAST(attributes AS VARCHAR) LIKE '%"otel_agent.call.%'
)
SELECT trace_id, span_id,
       a."otel_agent.call.input_artifacts" AS input_artifacts,
       a."otel_agent.call.output_artifacts" AS output_artifacts,
       oa_count(a."otel_agent.call.token_estimate") AS token_estimate
FROM d
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1;

-- oa_counted_items(rid, cat): the priced spans of category cat that are counted (not nested in a span of their
-- category), with their data dependencies (no list: an empty one).
CREATE OR REPLACE MACRO oa_counted_items(rid, cat) AS TABLE
SELECT * REPLACE (coalesce(input_artifacts, []::VARCHAR[]) AS input_artifacts,
                  coalesce(output_artifacts, []::VARCHAR[]) AS output_artifacts)
FROM oa_priced(rid)
LEFT JOIN oa_call_dependencies(rid) USING (trace_id, span_id)
WHERE category = cat AND NOT nested_call;

-- Provider calls (model inference; for our spans also retrieval from a search provider). A call nested
-- directly inside another provider call (two instrumentations recording the same request, e.g. an
-- instrumented OpenAI client inside our provider_call or inside an OpenInference LLM span) is left out, so
-- tokens and cost are counted once; it stays visible in classified_spans (nested_call = true).
CREATE OR REPLACE MACRO provider_calls_for_run(rid) AS TABLE
SELECT
    run_id, step_id, skill_invocation_id, trace_id, span_id, parent_span_id, span_name, convention, operation,
    provider, request_model, response_model,
    input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens,
    cost_usd, cost_source, cost_missing_reason,
    CASE WHEN cost_source = 'price_table' THEN price_model_pattern END AS price_model_pattern,
    CASE WHEN cost_source = 'price_table' THEN price_source END AS price_source,
    CASE WHEN cost_source = 'price_table' THEN price_source_date END AS price_source_date,
    start_time, end_time, duration_ms AS latency_ms, status_code, is_error, error_type,
    genai_ext.error_message,
    coalesce(retry_count, 0) AS retries,
    coalesce(fallback_count, 0) AS fallbacks,
    CASE WHEN coalesce(fallback_count, 0) > 0 THEN fallback_from_provider END AS fallback_from_provider,
    CASE WHEN coalesce(fallback_count, 0) > 0 THEN fallback_from_model END AS fallback_from_model,
    CASE WHEN coalesce(fallback_count, 0) > 0 THEN provider END AS fallback_to_provider,
    CASE WHEN coalesce(fallback_count, 0) > 0 THEN request_model END AS fallback_to_model,
    genai_ext.prompt_name, genai_ext.prompt_version, genai_ext.request_stream, genai_ext.time_to_first_chunk_ms,
    genai_ext.response_id, conversation_id,
    data_source_id,
    agent_name, iteration,
    input_artifacts, output_artifacts, token_estimate,
    service_name,
    genai_ext.metadata AS metadata
FROM oa_counted_items(rid, 'provider_call');

CREATE OR REPLACE VIEW provider_calls AS SELECT * FROM provider_calls_for_run(NULL);

CREATE OR REPLACE MACRO tool_invocations_for_run(rid) AS TABLE
SELECT
    run_id, step_id, skill_invocation_id, trace_id, span_id, parent_span_id, span_name, convention,
    operation, tool_name, tool_call_id, tool_type, tool_provider, skill_name, skill_version,
    start_time, end_time, duration_ms, status_code, is_error, error_type,
    coalesce(retry_count, 0) AS retries,
    cost_usd, cost_source,
    agent_name, iteration,
    input_artifacts, output_artifacts,
    service_name,
    genai_ext.metadata AS metadata
FROM oa_counted_items(rid, 'tool_invocation');

CREATE OR REPLACE VIEW tool_invocations AS SELECT * FROM tool_invocations_for_run(NULL);

CREATE OR REPLACE MACRO guard_results_for_run(rid) AS TABLE
SELECT
    run_id, step_id, skill_invocation_id, trace_id, span_id, parent_span_id, span_name, convention,
    guard_name, guard_stage AS stage, guard_outcome AS outcome,
    coalesce(guard_outcome = 'blocked', false) AS blocked,
    guard_reason AS reason, guard_target_id AS target_id, guard_action AS action,
    start_time AS time, duration_ms, status_code, error_type,
    service_name
FROM classified_spans_for_run(rid)
WHERE category = 'guard_result';

CREATE OR REPLACE VIEW guard_results AS SELECT * FROM guard_results_for_run(NULL);

CREATE OR REPLACE MACRO verifier_results_for_run(rid) AS TABLE
SELECT
    run_id, step_id, skill_invocation_id, trace_id, span_id, parent_span_id, span_name, convention,
    verifier_name, verifier_outcome AS outcome,
    CASE verifier_outcome WHEN 'passed' THEN true WHEN 'failed' THEN false END AS passed,
    verifier_score AS score, verifier_reason AS reason, verifier_target_id AS target_id,
    start_time AS time, duration_ms, status_code, error_type,
    service_name
FROM classified_spans_for_run(rid)
WHERE category = 'verifier_result';

CREATE OR REPLACE VIEW verifier_results AS SELECT * FROM verifier_results_for_run(NULL);

-- Memory operations (GenAI create_memory_store, delete_memory_store, create_memory, search_memory, update_memory,
-- upsert_memory, delete_memory spans, with gen_ai.memory.*).
CREATE OR REPLACE MACRO memory_operations_for_run(rid) AS TABLE
SELECT
    run_id, step_id, skill_invocation_id, trace_id, span_id, parent_span_id, span_name, convention, operation,
    memory_store_id AS store_id, memory_record_id AS record_id, memory_record_count AS record_count,
    start_time, end_time, duration_ms, status_code, is_error, error_type,
    service_name
FROM classified_spans_for_run(rid)
WHERE category = 'memory';

CREATE OR REPLACE VIEW memory_operations AS SELECT * FROM memory_operations_for_run(NULL);
