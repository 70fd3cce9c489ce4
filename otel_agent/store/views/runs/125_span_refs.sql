-- span_refs: where each unit of work's input and output live (seed 000's startSpan({inputRef}) /
-- finishSpan({outputRef})): one row per span of a run that carries otel_agent.input.ref or otel_agent.output.ref
-- (flow runs, steps, skills, provider calls and tool invocations of our helpers; docs/semconv.md). References
-- only — an artifact or version id, a URI, a content hash — never content. Read from the spans' own columns and
-- attributes (our helpers always set the run id, promoted at ingest), so it needs no classification; spans are
-- deduplicated on (trace_id, span_id) as everywhere (the latest end_time, then received_at, wins).
CREATE OR REPLACE MACRO span_refs_for_run(rid) AS TABLE
SELECT
    run_id,
    attributes->>'otel_agent.step.id' AS step_id,
    trace_id, span_id, parent_span_id, name AS span_name, record_kind,
    attributes->>'otel_agent.input.ref' AS input_ref,
    attributes->>'otel_agent.output.ref' AS output_ref,
    start_time, end_time
FROM spans
WHERE (rid IS NULL OR run_id = rid)
  -- a text test first: only the few spans with a ref are parsed
  AND contains(CAST(attributes AS VARCHAR), '.ref"')
  AND (attributes->>'otel_agent.input.ref' IS NOT NULL OR attributes->>'otel_agent.output.ref' IS NOT NULL)
  -- a pending span announcing a span's start (010_functions.sql) is not a span: its refs come when the span ends
  AND NOT oa_is_pending(attributes)
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1;

CREATE OR REPLACE VIEW span_refs AS SELECT * FROM span_refs_for_run(NULL);
