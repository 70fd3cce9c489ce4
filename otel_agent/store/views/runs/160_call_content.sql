-- call_content: the content of each provider call (opt-in in the conventions): gen_ai.input.messages,
-- gen_ai.output.messages and gen_ai.system_instructions as JSON text, from the call's span, else from the
-- gen_ai.client.inference.operation.details log record parented to it (instrumentations that keep content off
-- spans emit it so). Each field comes from the span when the span has it. Structured values and JSON strings
-- read the same. A call with neither has NULLs and content_source NULL.
CREATE OR REPLACE MACRO oa_json_text(j) AS CASE WHEN json_type(j) = 'VARCHAR' THEN j->>'$' ELSE CAST(j AS VARCHAR) END;

CREATE OR REPLACE VIEW call_content AS
WITH calls AS (
    SELECT run_id, step_id, trace_id, span_id, span_name, provider, request_model, start_time
    FROM provider_calls
),
-- the span's copies (src 0, the latest first) and its log records (src 1, the earliest first): each field is the
-- first non-NULL value in that order (arg_min skips NULL values)
found AS (
    SELECT trace_id, span_id, src,
           oa_json_text(attributes->'gen_ai.input.messages') AS input_messages,
           oa_json_text(attributes->'gen_ai.output.messages') AS output_messages,
           oa_json_text(attributes->'gen_ai.system_instructions') AS system_instructions,
           ord
    FROM (
        SELECT s.trace_id, s.span_id, 0 AS src, -epoch_ns(s.end_time) AS ord, s.attributes
        FROM spans AS s
        SEMI JOIN calls AS c ON c.trace_id = s.trace_id AND c.span_id = s.span_id
        UNION ALL
        SELECT l.trace_id, l.span_id, 1, epoch_ns(l.time), l.attributes
        FROM logs AS l
        WHERE l.event_name = 'gen_ai.client.inference.operation.details' AND l.span_id IS NOT NULL
    )
),
content AS (
    SELECT trace_id, span_id,
           arg_min(input_messages, (src, ord)) AS input_messages,
           arg_min(output_messages, (src, ord)) AS output_messages,
           arg_min(system_instructions, (src, ord)) AS system_instructions,
           min(src) FILTER (WHERE input_messages IS NOT NULL OR output_messages IS NOT NULL
                              OR system_instructions IS NOT NULL) AS src
    FROM found
    GROUP BY trace_id, span_id
)
SELECT
    c.run_id, c.step_id, c.trace_id, c.span_id, c.span_name, c.provider, c.request_model, c.start_time,
    t.input_messages, t.output_messages, t.system_instructions,
    CASE t.src WHEN 0 THEN 'span' WHEN 1 THEN 'log' END AS content_source
FROM calls AS c
LEFT JOIN content AS t ON t.trace_id = c.trace_id AND t.span_id = c.span_id;
