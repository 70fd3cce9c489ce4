-- evaluations: one row per gen_ai.evaluation.result event (an OTLP log record with that event name; a
-- re-delivered record counts once). The record judges the provider call whose gen_ai.response.id it carries
-- when one is stored, else the span it is parented to (its trace_id/span_id); run_id, the judged span's category and, for a call,
-- its provider and model come from classified_spans.
CREATE OR REPLACE VIEW evaluations AS
WITH e AS (
    SELECT
        time, trace_id, span_id, service_name,
        json_transform(
            attributes,
            '{"gen_ai.evaluation.name":"VARCHAR","gen_ai.evaluation.score.value":"VARCHAR",'
                || '"gen_ai.evaluation.score.label":"VARCHAR","gen_ai.evaluation.explanation":"VARCHAR",'
                || '"gen_ai.response.id":"VARCHAR","error.type":"VARCHAR"}'
        ) AS a
    FROM logs
    WHERE event_name = 'gen_ai.evaluation.result'
    QUALIFY row_number() OVER (PARTITION BY time, content_hash ORDER BY received_at) = 1
),
judged AS (
    SELECT
        e.time, oa_text(e.trace_id) AS log_trace_id, oa_text(e.span_id) AS log_span_id, e.service_name,
        oa_text(e.a."gen_ai.evaluation.name") AS evaluation_name,
        TRY_CAST(e.a."gen_ai.evaluation.score.value" AS DOUBLE) AS score_value,
        oa_text(e.a."gen_ai.evaluation.score.label") AS score_label,
        oa_text(e.a."gen_ai.evaluation.explanation") AS explanation,
        oa_text(e.a."gen_ai.response.id") AS response_id,
        oa_text(e.a."error.type") AS error_type
    FROM e
),
by_response AS (
    SELECT response_id, any_value(trace_id) AS trace_id, any_value(span_id) AS span_id
    FROM classified_spans
    WHERE response_id IS NOT NULL AND category = 'provider_call'
      AND response_id IN (SELECT response_id FROM judged)
    GROUP BY response_id
),
targets AS (
    SELECT
        j.*,
        -- a response id naming a stored call wins over the span the record is parented to: an evaluator records
        -- the result inside its own span, naming the response it judged (issue 32)
        coalesce(r.trace_id, CASE WHEN j.log_span_id IS NOT NULL THEN j.log_trace_id END) AS trace_id,
        coalesce(r.span_id, j.log_span_id) AS span_id,
        CASE
            WHEN r.span_id IS NOT NULL AND r.span_id IS NOT DISTINCT FROM j.log_span_id THEN 'parent'
            WHEN r.span_id IS NOT NULL THEN 'response_id'
            WHEN j.log_span_id IS NOT NULL THEN 'parent'
        END AS joined_by
    FROM judged AS j
    LEFT JOIN by_response AS r ON r.response_id = j.response_id
)
SELECT
    t.evaluation_name, t.score_value, t.score_label, t.explanation, t.error_type,
    t.time, t.trace_id, t.span_id, t.joined_by,
    c.run_id, c.step_id, c.category AS judged_category, c.span_name AS judged_span_name,
    coalesce(t.response_id, c.response_id) AS response_id,
    CASE WHEN c.category = 'provider_call' THEN c.provider END AS provider,
    CASE WHEN c.category = 'provider_call' THEN coalesce(c.response_model, c.request_model) END AS model,
    t.service_name
FROM targets AS t
LEFT JOIN classified_spans AS c ON c.trace_id = t.trace_id AND c.span_id = t.span_id;
