-- Layer 3, public: classified_spans — one row per span with its category, normalised fields, run, and its
-- place in the run hierarchy (step_id, parent_step_id, skill_invocation_id), found by walking the parent
-- chain from each root (a span whose parent is absent from the store counts as a root).
--   step_id: the span's otel_agent.step.id; else the nearest step above it (a step span is its own step:
--            ours by otel_agent.step.id, a third-party step — nested agent or traceloop task — by span id).
--   skill_invocation_id: the nearest skill invocation at or above the span, below its step.
-- classified_spans_for_run(rid) computes the same rows for one run only (fast: it reads only the traces
-- of that run); classified_spans_for_run(NULL) is the whole view.
CREATE OR REPLACE MACRO classified_spans_for_run(rid) AS TABLE
WITH RECURSIVE
c AS MATERIALIZED (
    SELECT * FROM oa_classified(rid)
),
tree(trace_id, span_id, step_id, parent_step_id, skill_invocation_id, depth) AS (
    SELECT
        trace_id,
        span_id,
        CASE WHEN category = 'step' THEN coalesce(attr_step_id, span_id) ELSE attr_step_id END,
        CAST(NULL AS VARCHAR),
        CASE WHEN category = 'skill_invocation' THEN coalesce(attr_skill_invocation_id, span_id) END,
        1
    FROM c
    WHERE NOT parent_found
    UNION ALL
    SELECT
        ch.trace_id,
        ch.span_id,
        CASE
            WHEN ch.category = 'step' THEN coalesce(ch.attr_step_id, ch.span_id)
            WHEN ch.category = 'flow_run' THEN ch.attr_step_id
            ELSE coalesce(ch.attr_step_id, t.step_id)
        END,
        CASE WHEN ch.category = 'step' THEN t.step_id END,
        CASE
            WHEN ch.category = 'skill_invocation' THEN coalesce(ch.attr_skill_invocation_id, ch.span_id)
            WHEN ch.category IN ('step', 'flow_run') THEN NULL
            ELSE t.skill_invocation_id
        END,
        t.depth + 1
    FROM tree AS t
    JOIN c AS ch ON ch.trace_id = t.trace_id AND ch.parent_span_id = t.span_id
    WHERE t.depth < 128
)
SELECT
    c.* EXCLUDE (attr_step_id, attr_skill_invocation_id),
    coalesce(t.step_id, CASE WHEN c.category = 'step' THEN coalesce(c.attr_step_id, c.span_id)
                             ELSE c.attr_step_id END) AS step_id,
    t.parent_step_id,
    coalesce(t.skill_invocation_id,
             CASE WHEN c.category = 'skill_invocation' THEN coalesce(c.attr_skill_invocation_id, c.span_id) END)
        AS skill_invocation_id
FROM c
LEFT JOIN tree AS t ON t.trace_id = c.trace_id AND t.span_id = c.span_id
WHERE rid IS NULL OR c.run_id = rid;

CREATE OR REPLACE VIEW classified_spans AS SELECT * FROM classified_spans_for_run(NULL);
