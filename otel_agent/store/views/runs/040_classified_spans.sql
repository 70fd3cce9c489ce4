-- Layer 3, public: classified_spans — one row per span with its category, normalised fields, run, and its
-- place in the run hierarchy, found by walking down the parent links:
--   step_id: the span's otel_agent.step.id; else the nearest step above it (a step span is its own step:
--            ours by otel_agent.step.id, a third-party step — nested agent or traceloop task — by span id).
--   parent_step_id (steps only): the step the step sits in.
--   skill_invocation_id: the nearest skill invocation at or above the span, below its step.
-- Only what needs it is walked: spans below a skill invocation, and spans without otel_agent.step.id below a
-- span whose step is known (our spans carry their run and step, so a store of our spans walks little).
-- classified_spans_for_run(rid) computes the same rows for one run only (fast: it reads only the traces
-- of that run); classified_spans_for_run(NULL) is the whole view.
-- oa_classified_spans_for_run(rid): the same rows with the seldom-read 2026 attributes as one struct column
-- (genai_ext), what the internal layers read.
CREATE OR REPLACE MACRO oa_classified_spans_for_run(rid) AS TABLE
WITH RECURSIVE
c AS MATERIALIZED (
    SELECT * FROM oa_classified(rid)
),
edges AS MATERIALIZED (
    SELECT
        trace_id, span_id, parent_span_id, category,
        CASE WHEN category = 'step' THEN coalesce(attr_step_id, span_id) ELSE attr_step_id END AS known_step_id,
        CASE WHEN category = 'skill_invocation' THEN coalesce(attr_skill_invocation_id, span_id) END AS own_skill_id
    FROM c
),
-- spans whose step is unknown hang below these parents
needs_step AS (
    SELECT DISTINCT trace_id, parent_span_id AS span_id
    FROM edges
    WHERE known_step_id IS NULL AND parent_span_id IS NOT NULL AND category <> 'flow_run'
),
step_walk(trace_id, span_id, step_id, depth) AS (
    SELECT e.trace_id, e.span_id, e.known_step_id, 0
    FROM edges AS e
    SEMI JOIN needs_step AS n ON n.trace_id = e.trace_id AND n.span_id = e.span_id
    WHERE e.known_step_id IS NOT NULL
    UNION ALL
    SELECT ch.trace_id, ch.span_id, w.step_id, w.depth + 1
    FROM step_walk AS w
    JOIN edges AS ch ON ch.trace_id = w.trace_id AND ch.parent_span_id = w.span_id
    WHERE w.depth < 128 AND ch.known_step_id IS NULL AND ch.category <> 'flow_run'
),
skill_walk(trace_id, span_id, skill_invocation_id, depth) AS (
    SELECT trace_id, span_id, own_skill_id, 0
    FROM edges
    WHERE own_skill_id IS NOT NULL
    UNION ALL
    SELECT ch.trace_id, ch.span_id, w.skill_invocation_id, w.depth + 1
    FROM skill_walk AS w
    JOIN edges AS ch ON ch.trace_id = w.trace_id AND ch.parent_span_id = w.span_id
    WHERE w.depth < 128 AND ch.category NOT IN ('step', 'flow_run', 'skill_invocation')
),
placed AS MATERIALIZED (
    SELECT
        e.trace_id, e.span_id, e.parent_span_id, e.category,
        coalesce(e.known_step_id, sw.step_id) AS step_id,
        kw.skill_invocation_id
    FROM edges AS e
    LEFT JOIN (SELECT trace_id, span_id, any_value(step_id) AS step_id FROM step_walk WHERE depth > 0 GROUP BY ALL)
        AS sw ON sw.trace_id = e.trace_id AND sw.span_id = e.span_id
    LEFT JOIN (SELECT trace_id, span_id, any_value(skill_invocation_id) AS skill_invocation_id
               FROM skill_walk GROUP BY ALL)
        AS kw ON kw.trace_id = e.trace_id AND kw.span_id = e.span_id
),
step_parents AS (
    SELECT s.trace_id, s.span_id, p.step_id AS parent_step_id
    FROM placed AS s
    JOIN placed AS p ON p.trace_id = s.trace_id AND p.span_id = s.parent_span_id
    WHERE s.category = 'step'
)
SELECT
    c.* EXCLUDE (attr_step_id, attr_skill_invocation_id),
    pl.step_id,
    sp.parent_step_id,
    pl.skill_invocation_id
FROM c
JOIN placed AS pl ON pl.trace_id = c.trace_id AND pl.span_id = c.span_id
LEFT JOIN step_parents AS sp ON sp.trace_id = c.trace_id AND sp.span_id = c.span_id
WHERE rid IS NULL OR c.run_id = rid;

CREATE OR REPLACE MACRO classified_spans_for_run(rid) AS TABLE
SELECT * EXCLUDE (genai_ext), genai_ext.* FROM oa_classified_spans_for_run(rid);

CREATE OR REPLACE VIEW classified_spans AS SELECT * FROM classified_spans_for_run(NULL);
