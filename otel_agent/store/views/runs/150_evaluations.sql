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
                || '"gen_ai.response.id":"VARCHAR","error.type":"VARCHAR",'
                || '"phoenix.annotation.annotator_kind":"VARCHAR","phoenix.annotation.identifier":"VARCHAR"}'
        ) AS a
    FROM logs
    WHERE event_name = 'gen_ai.evaluation.result'
    QUALIFY row_number() OVER (PARTITION BY time, content_hash ORDER BY received_at) = 1
),
-- Span annotations sent as Phoenix's clients send them (POST /v1/span_annotations, otel_agent/server/annotations.py:
-- records carrying phoenix.annotation.annotator_kind): as in Phoenix, an annotation with the same span, name and
-- identifier (none counting as '') replaces the earlier one; the latest by time is kept.
annotated AS (
    SELECT * FROM e
    QUALIFY a."phoenix.annotation.annotator_kind" IS NULL
         OR row_number() OVER (PARTITION BY a."phoenix.annotation.annotator_kind" IS NULL, span_id,
                                            a."gen_ai.evaluation.name",
                                            coalesce(a."phoenix.annotation.identifier", '')
                               ORDER BY time DESC, service_name) = 1
),
-- The same result recorded on spans (issue 32): a gen_ai.evaluation.result span event (the span it is on, else the
-- span that span links to, is judged), and a feedback / annotation span added later — one carrying
-- gen_ai.evaluation.name, or an OpenInference EVALUATOR span — tied to the span it judges by a span link (else its
-- parent). Their rows join the log records' below with trace_id/span_id standing for the judged span already.
span_recorded AS (
    SELECT ev.time, coalesce(l.linked_trace_id, ev.trace_id) AS trace_id,
           coalesce(l.linked_span_id, ev.span_id) AS span_id, s.service_name, ev.attributes,
           CASE WHEN l.linked_span_id IS NOT NULL THEN 'link' ELSE 'span_event' END AS joined_by
    FROM span_events AS ev
    JOIN spans AS s ON s.trace_id = ev.trace_id AND s.span_id = ev.span_id
    LEFT JOIN span_links AS l
        ON l.trace_id = ev.trace_id AND l.span_id = ev.span_id AND l.link_index = 0
       AND s.attributes->>'gen_ai.operation.name' IS NULL AND s.attributes->>'openinference.span.kind' IS NULL
    WHERE ev.name = 'gen_ai.evaluation.result'
    QUALIFY row_number() OVER (PARTITION BY ev.trace_id, ev.span_id, ev.event_index ORDER BY s.end_time DESC) = 1
    UNION ALL
    SELECT s.end_time, coalesce(l.linked_trace_id, s.trace_id), coalesce(l.linked_span_id, s.parent_span_id),
           s.service_name,
           json_object(
               'gen_ai.evaluation.name', coalesce(s.attributes->>'gen_ai.evaluation.name', s.name),
               'gen_ai.evaluation.score.value',
               coalesce(s.attributes->>'gen_ai.evaluation.score.value', s.attributes->>'eval.score'),
               'gen_ai.evaluation.score.label',
               coalesce(s.attributes->>'gen_ai.evaluation.score.label', s.attributes->>'eval.label'),
               'gen_ai.evaluation.explanation',
               coalesce(s.attributes->>'gen_ai.evaluation.explanation', s.attributes->>'eval.explanation'),
               'gen_ai.response.id', s.attributes->>'gen_ai.response.id',
               'error.type', s.attributes->>'error.type'),
           CASE WHEN l.linked_span_id IS NOT NULL THEN 'link' ELSE 'parent' END
    FROM spans AS s
    LEFT JOIN span_links AS l ON l.trace_id = s.trace_id AND l.span_id = s.span_id AND l.link_index = 0
    WHERE (s.attributes->>'gen_ai.evaluation.name' IS NOT NULL
           OR upper(s.attributes->>'openinference.span.kind') = 'EVALUATOR')
      AND (l.linked_span_id IS NOT NULL OR oa_text(s.parent_span_id) IS NOT NULL)
    QUALIFY row_number() OVER (PARTITION BY s.trace_id, s.span_id ORDER BY s.end_time DESC, s.received_at DESC) = 1
),
span_judged AS (
    SELECT
        r.time, r.trace_id AS log_trace_id, r.span_id AS log_span_id, r.service_name,
        oa_text(r.attributes->>'gen_ai.evaluation.name') AS evaluation_name,
        TRY_CAST(r.attributes->>'gen_ai.evaluation.score.value' AS DOUBLE) AS score_value,
        oa_text(r.attributes->>'gen_ai.evaluation.score.label') AS score_label,
        oa_text(r.attributes->>'gen_ai.evaluation.explanation') AS explanation,
        oa_text(r.attributes->>'gen_ai.response.id') AS response_id,
        oa_text(r.attributes->>'error.type') AS error_type,
        r.joined_by AS span_joined_by
    FROM span_recorded AS r
),
judged AS (
    SELECT
        e.time, oa_text(e.trace_id) AS log_trace_id, oa_text(e.span_id) AS log_span_id, e.service_name,
        oa_text(e.a."gen_ai.evaluation.name") AS evaluation_name,
        TRY_CAST(e.a."gen_ai.evaluation.score.value" AS DOUBLE) AS score_value,
        oa_text(e.a."gen_ai.evaluation.score.label") AS score_label,
        oa_text(e.a."gen_ai.evaluation.explanation") AS explanation,
        oa_text(e.a."gen_ai.response.id") AS response_id,
        oa_text(e.a."error.type") AS error_type,
        oa_text(e.a."phoenix.annotation.annotator_kind") AS annotator_kind,
        NULL::VARCHAR AS span_joined_by
    FROM annotated AS e
    UNION ALL BY NAME
    SELECT * FROM span_judged
),
by_response AS (
    SELECT response_id, any_value(trace_id) AS trace_id, any_value(span_id) AS span_id
    FROM classified_spans
    WHERE response_id IS NOT NULL AND category = 'provider_call'
      AND response_id IN (SELECT response_id FROM judged)
    GROUP BY response_id
),
-- a record with a span id and no trace id (a Phoenix span annotation names the span alone): the stored span of that
-- id (span ids are random 64-bit values: one trace has it)
by_span AS (
    SELECT span_id, any_value(trace_id) AS trace_id
    FROM spans
    WHERE span_id IN (SELECT log_span_id FROM judged WHERE log_trace_id IS NULL AND log_span_id IS NOT NULL)
    GROUP BY span_id
),
targets AS (
    SELECT
        j.*,
        -- a response id naming a stored call wins over the span the record is parented to: an evaluator records
        -- the result inside its own span, naming the response it judged (issue 32)
        coalesce(r.trace_id, CASE WHEN j.log_span_id IS NOT NULL THEN coalesce(j.log_trace_id, s.trace_id) END)
            AS trace_id,
        coalesce(r.span_id, j.log_span_id) AS span_id,
        CASE
            WHEN r.span_id IS NOT NULL AND r.span_id IS NOT DISTINCT FROM j.log_span_id
                THEN coalesce(j.span_joined_by, CASE WHEN j.log_trace_id IS NULL THEN 'span_id' ELSE 'parent' END)
            WHEN r.span_id IS NOT NULL THEN 'response_id'
            WHEN j.log_span_id IS NOT NULL AND j.log_trace_id IS NULL THEN
                CASE WHEN s.trace_id IS NOT NULL THEN 'span_id' END
            WHEN j.log_span_id IS NOT NULL THEN coalesce(j.span_joined_by, 'parent')
        END AS joined_by
    FROM judged AS j
    LEFT JOIN by_response AS r ON r.response_id = j.response_id
    LEFT JOIN by_span AS s ON s.span_id = j.log_span_id AND j.log_trace_id IS NULL
)
SELECT
    t.evaluation_name, t.score_value, t.score_label, t.explanation, t.error_type,
    t.time, t.trace_id, t.span_id, t.joined_by,
    c.run_id, c.step_id, c.category AS judged_category, c.span_name AS judged_span_name,
    coalesce(t.response_id, c.response_id) AS response_id,
    CASE WHEN c.category = 'provider_call' THEN c.provider END AS provider,
    CASE WHEN c.category = 'provider_call' THEN coalesce(c.response_model, c.request_model) END AS model,
    t.service_name,
    t.annotator_kind
FROM targets AS t
LEFT JOIN classified_spans AS c ON c.trace_id = t.trace_id AND c.span_id = t.span_id;
