-- Context snapshots (docs/views-evidence.md): recorded on the provider-call span as `otel_agent.context.*`
-- attributes plus one event per type allocation, per offered block and per compression. A snapshot is found
-- through its events (span_events is small next to spans), then its span's attributes are read.

CREATE OR REPLACE VIEW context_allocations AS
SELECT e.attributes->>'otel_agent.context.snapshot_id' AS snapshot_id,
       e.attributes->>'otel_agent.context.block.type' AS block_type,
       TRY_CAST(e.attributes->>'otel_agent.context.allocation.share' AS DOUBLE) AS share,
       TRY_CAST(e.attributes->>'otel_agent.context.allocation.budget_tokens' AS BIGINT) AS budget_tokens,
       TRY_CAST(e.attributes->>'otel_agent.context.allocation.used_tokens' AS BIGINT) AS used_tokens,
       e.trace_id, e.span_id, e.time
FROM span_events e
WHERE e.name = 'otel_agent.context.allocation'
QUALIFY row_number() OVER (PARTITION BY snapshot_id, block_type ORDER BY e.time, e.trace_id, e.span_id) = 1;

CREATE OR REPLACE VIEW context_snapshots AS
WITH snapshot_spans AS (
    SELECT DISTINCT trace_id, span_id, attributes->>'otel_agent.context.snapshot_id' AS snapshot_id
    FROM span_events
    WHERE name = 'otel_agent.context.allocation'
),
spans_of AS (
    SELECT s.trace_id, s.span_id, s.name, s.start_time, s.end_time, s.service_name, s.attributes
    FROM spans s
    SEMI JOIN snapshot_spans x ON x.trace_id = s.trace_id AND x.span_id = s.span_id
    QUALIFY row_number() OVER (PARTITION BY s.trace_id, s.span_id ORDER BY s.end_time) = 1
),
snaps AS (
    SELECT coalesce(s.attributes->>'otel_agent.context.snapshot_id', x.snapshot_id) AS snapshot_id,
           TRY_CAST(s.attributes->>'otel_agent.context.total_budget_tokens' AS BIGINT) AS total_budget_tokens,
           TRY_CAST(s.attributes->>'otel_agent.context.response_reserve_tokens' AS BIGINT) AS response_reserve_tokens,
           TRY_CAST(s.attributes->>'otel_agent.context.available_tokens' AS BIGINT) AS available_tokens,
           TRY_CAST(s.attributes->>'otel_agent.context.used_tokens' AS BIGINT) AS used_tokens,
           coalesce(s.attributes->>'gen_ai.provider.name', s.attributes->>'gen_ai.system') AS provider,
           s.attributes->>'gen_ai.request.model' AS model,
           s.attributes->>'gen_ai.operation.name' AS operation,
           s.attributes->>'otel_agent.run.id' AS run_id,
           s.attributes->>'otel_agent.step.id' AS step_id,
           s.name AS span_name,
           s.trace_id, s.span_id, s.service_name,
           s.start_time AS recorded_at
    FROM spans_of s
    JOIN snapshot_spans x USING (trace_id, span_id)
    QUALIFY row_number() OVER (PARTITION BY snapshot_id ORDER BY recorded_at, trace_id, span_id) = 1
),
block_counts AS (
    SELECT e.attributes->>'otel_agent.context.snapshot_id' AS snapshot_id,
           count(DISTINCT e.attributes->>'otel_agent.context.block.id') AS blocks,
           count(DISTINCT e.attributes->>'otel_agent.context.block.id')
               FILTER (WHERE (e.attributes->>'otel_agent.context.block.status') IN ('included', 'truncated'))
               AS included_blocks
    FROM span_events e
    WHERE e.name = 'otel_agent.context.block'
    GROUP BY ALL
),
compression_counts AS (
    SELECT e.attributes->>'otel_agent.context.snapshot_id' AS snapshot_id,
           count(DISTINCT e.attributes->>'otel_agent.context.compression.id') AS compressions
    FROM span_events e
    WHERE e.name = 'otel_agent.context.compression'
    GROUP BY ALL
)
SELECT s.snapshot_id, s.total_budget_tokens, s.response_reserve_tokens, s.available_tokens, s.used_tokens,
       coalesce(b.blocks, 0) AS blocks,
       coalesce(b.included_blocks, 0) AS included_blocks,
       coalesce(c.compressions, 0) AS compressions,
       s.provider, s.model, s.operation, s.run_id, s.step_id, s.span_name,
       s.trace_id, s.span_id, s.service_name, s.recorded_at
FROM snaps s
LEFT JOIN block_counts b USING (snapshot_id)
LEFT JOIN compression_counts c USING (snapshot_id);

CREATE OR REPLACE VIEW context_blocks AS
WITH blocks AS (
    SELECT e.attributes->>'otel_agent.context.snapshot_id' AS snapshot_id,
           e.attributes->>'otel_agent.context.block.id' AS block_id,
           e.attributes->>'otel_agent.context.block.type' AS block_type,
           TRY_CAST(e.attributes->>'otel_agent.context.block.priority' AS BIGINT) AS priority,
           TRY_CAST(e.attributes->>'otel_agent.context.block.allocated_tokens' AS BIGINT) AS allocated_tokens,
           TRY_CAST(e.attributes->>'otel_agent.context.block.original_tokens' AS BIGINT) AS original_tokens,
           TRY_CAST(e.attributes->>'otel_agent.context.block.used_tokens' AS BIGINT) AS used_tokens,
           e.attributes->>'otel_agent.context.block.status' AS status,
           e.attributes->>'otel_agent.context.block.source_ref' AS source_ref,
           coalesce(TRY_CAST(e.attributes->'otel_agent.context.block.tool_names' AS VARCHAR[]), []::VARCHAR[])
               AS tool_names,
           e.trace_id, e.span_id, e.event_index, e.time
    FROM span_events e
    WHERE e.name = 'otel_agent.context.block'
    QUALIFY row_number() OVER (PARTITION BY snapshot_id, block_id ORDER BY e.time, e.trace_id, e.span_id) = 1
)
SELECT snapshot_id, block_id, block_type, priority, allocated_tokens, original_tokens, used_tokens, status,
       source_ref, tool_names,
       row_number() OVER (PARTITION BY snapshot_id ORDER BY event_index, block_id) AS placement,
       trace_id, span_id, event_index, time
FROM blocks;

CREATE OR REPLACE VIEW context_compressions AS
SELECT e.attributes->>'otel_agent.context.compression.id' AS compression_id,
       e.attributes->>'otel_agent.context.snapshot_id' AS snapshot_id,
       e.attributes->>'otel_agent.context.compression.block_id' AS block_id,
       e.attributes->>'otel_agent.context.block.type' AS block_type,
       e.attributes->>'otel_agent.context.compression.method' AS method,
       TRY_CAST(e.attributes->>'otel_agent.context.compression.original_tokens' AS BIGINT) AS original_tokens,
       TRY_CAST(e.attributes->>'otel_agent.context.compression.compressed_tokens' AS BIGINT) AS compressed_tokens,
       TRY_CAST(e.attributes->>'otel_agent.context.compression.original_tokens' AS BIGINT)
           - TRY_CAST(e.attributes->>'otel_agent.context.compression.compressed_tokens' AS BIGINT) AS saved_tokens,
       e.trace_id, e.span_id, e.time AS compressed_at
FROM span_events e
WHERE e.name = 'otel_agent.context.compression'
QUALIFY row_number() OVER (PARTITION BY compression_id ORDER BY e.time, e.trace_id, e.span_id) = 1;
