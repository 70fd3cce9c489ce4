-- data_quality: what the instrumentation helpers were called with wrongly. In lenient mode (the default) a
-- misused helper does not raise into the agent: it records each problem on the span it emits, in
-- otel_agent.misuse (string[]; docs/semconv.md, "When a helper is misused"). One row per span and problem, in
-- the order the helper found them. Spans are deduplicated on (trace_id, span_id) as everywhere (the latest
-- end_time, then received_at, wins). run_id and record_kind are the spans' typed columns (our helpers always
-- set them), so this view needs neither the classification nor the run resolution.
CREATE OR REPLACE VIEW data_quality AS
WITH marked AS (
    SELECT
        trace_id, span_id, name, record_kind, record_id, run_id, service_name, start_time,
        attributes->>'otel_agent.step.id' AS step_id,
        from_json(attributes->'otel_agent.misuse', '["VARCHAR"]') AS problems
    FROM spans
    -- a text test first: only the few marked spans are parsed
    WHERE contains(CAST(attributes AS VARCHAR), '"otel_agent.misuse"')
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
)
SELECT
    run_id, step_id, trace_id, span_id, name AS span_name, record_kind, record_id, service_name, start_time,
    'instrumentation_misuse' AS issue,
    CAST(generate_subscripts(problems, 1) AS BIGINT) AS problem_index,
    unnest(problems) AS detail
FROM marked;
