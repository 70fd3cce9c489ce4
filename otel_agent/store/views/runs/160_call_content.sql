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
on_span AS (
    SELECT s.trace_id, s.span_id,
           arg_max(oa_json_text(s.attributes->'gen_ai.input.messages'), s.end_time) AS input_messages,
           arg_max(oa_json_text(s.attributes->'gen_ai.output.messages'), s.end_time) AS output_messages,
           arg_max(oa_json_text(s.attributes->'gen_ai.system_instructions'), s.end_time) AS system_instructions
    FROM spans AS s
    SEMI JOIN calls AS c ON c.trace_id = s.trace_id AND c.span_id = s.span_id
    GROUP BY s.trace_id, s.span_id
),
on_log AS (
    SELECT l.trace_id, l.span_id,
           arg_min(oa_json_text(l.attributes->'gen_ai.input.messages'), l.time) AS input_messages,
           arg_min(oa_json_text(l.attributes->'gen_ai.output.messages'), l.time) AS output_messages,
           arg_min(oa_json_text(l.attributes->'gen_ai.system_instructions'), l.time) AS system_instructions
    FROM logs AS l
    WHERE l.event_name = 'gen_ai.client.inference.operation.details' AND l.span_id IS NOT NULL
    GROUP BY l.trace_id, l.span_id
)
SELECT
    c.run_id, c.step_id, c.trace_id, c.span_id, c.span_name, c.provider, c.request_model, c.start_time,
    coalesce(s.input_messages, l.input_messages) AS input_messages,
    coalesce(s.output_messages, l.output_messages) AS output_messages,
    coalesce(s.system_instructions, l.system_instructions) AS system_instructions,
    CASE
        WHEN s.input_messages IS NOT NULL OR s.output_messages IS NOT NULL OR s.system_instructions IS NOT NULL
            THEN 'span'
        WHEN l.input_messages IS NOT NULL OR l.output_messages IS NOT NULL OR l.system_instructions IS NOT NULL
            THEN 'log'
    END AS content_source
FROM calls AS c
LEFT JOIN on_span AS s ON s.trace_id = c.trace_id AND s.span_id = c.span_id
LEFT JOIN on_log AS l ON l.trace_id = c.trace_id AND l.span_id = c.span_id;
