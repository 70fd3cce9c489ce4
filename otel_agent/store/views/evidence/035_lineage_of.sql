-- claim_lineage_of(claim_id): the rows of `claim_lineage WHERE claim_id = ?`, computed for that claim only
-- (docs/views-evidence.md). The view derives every claim's support before filtering; this macro follows the
-- claim's keys through lineage_keys (store/schema/060_lineage_keys.sql): the claim's rows lead on to the evidence
-- its citations cite, those to their sources. It then reads `spans` once, at the end times found, and from
-- those few spans (re-checking every id) builds the rows and judges the claim by the rules of claim_support.
-- tests/derived_evidence checks that both give the same rows. Assumes record ids are unique per kind (as the
-- instrumentation mints them).
--
-- Kept small on purpose: DuckDB plans a table macro anew on every call, even as a prepared statement, and
-- planning, not reading, is most of its cost (bench/derive_evidence.py: 12–15 ms on 1 M spans, of which ~4 ms
-- executing). Each CTE, join and macro expansion adds to it; that is why retrieval documents are read at ingest
-- (parsed_retrieval_documents) rather than here.

CREATE OR REPLACE MACRO claim_lineage_of(wanted) AS TABLE
WITH
verdicts AS MATERIALIZED (
    SELECT target_kind, target_id, status FROM review_verdicts
    WHERE target_kind IN ('claim', 'evidence_item', 'conflict')
),
-- 1. where the spans that name the claim are, then those its citations lead on to, then their sources
claim_keys AS MATERIALIZED (
    SELECT end_time, next_key, kind FROM lineage_keys WHERE key = lineage_key(wanted)
),
evidence_keys AS MATERIALIZED (
    SELECT end_time, next_key, kind FROM lineage_keys WHERE key IN (SELECT next_key FROM claim_keys)
),
keys_found AS MATERIALIZED (
    SELECT end_time, kind FROM claim_keys
    UNION ALL SELECT end_time, kind FROM evidence_keys
    UNION ALL SELECT end_time, kind FROM lineage_keys WHERE key IN (SELECT next_key FROM evidence_keys)
),
-- our records among the spans at those end times (few: the rows of documents, which a popular document can
-- have by the hundred, are read from parsed_retrieval_documents below instead)
found AS MATERIALIZED (
    SELECT name, record_kind, record_id, record_ref, attributes, trace_id, span_id, start_time
    FROM spans
    WHERE end_time IN (SELECT end_time FROM keys_found WHERE kind <> 'retrieval')
      AND record_kind IN ('claim', 'citation', 'evidence_item', 'source', 'conflict')
),
-- 2. the documents of other conventions' retrieval spans at those end times (their evidence and sources)
documents_found AS MATERIALIZED (
    SELECT * FROM parsed_retrieval_documents
    WHERE end_time IN (SELECT end_time FROM keys_found WHERE kind = 'retrieval')
),
-- their run as in the retrieval_documents view (020_records.sql): the span's run id, else its parent's, else the
-- earliest of its trace, else its trace id (spans are read only for documents without a run id). The spans of
-- those documents first, found by their end times (zone maps), then their parents among the spans: written as
-- one self-join of `spans`, DuckDB built its hash table from every span with a run id (~45 ms per call on 1 M
-- spans, ~1 s on 10 M) even when no document lacked one.
orphan_spans AS MATERIALIZED (
    SELECT trace_id, span_id, parent_span_id FROM spans
    WHERE end_time IN (SELECT end_time FROM documents_found WHERE run_id IS NULL)
      AND (trace_id, span_id) IN (SELECT (trace_id, span_id) FROM documents_found WHERE run_id IS NULL)
),
documents AS MATERIALIZED (
    SELECT d.* REPLACE (coalesce(d.run_id, pr.parent_run_id, tr.trace_run_id, d.trace_id) AS run_id)
    FROM documents_found AS d
    LEFT JOIN (
        SELECT o.trace_id, o.span_id, any_value(p.run_id) AS parent_run_id
        FROM spans AS p
        JOIN orphan_spans AS o ON p.trace_id = o.trace_id AND p.span_id = o.parent_span_id
        WHERE p.run_id IS NOT NULL AND p.span_id IN (SELECT parent_span_id FROM orphan_spans)
        GROUP BY ALL
    ) AS pr ON pr.trace_id = d.trace_id AND pr.span_id = d.span_id
    LEFT JOIN (
        SELECT trace_id, arg_min(run_id, start_time) AS trace_run_id
        FROM spans
        WHERE run_id IS NOT NULL AND trace_id IN (SELECT trace_id FROM documents_found WHERE run_id IS NULL)
        GROUP BY trace_id
    ) AS tr ON tr.trace_id = d.trace_id
),
-- 3. the claim's citations, the evidence they cite, its sources: each the earliest copy of its id
ci AS MATERIALIZED (
    SELECT record_id AS citation_id,
           attributes->>'otel_agent.citation.evidence_id' AS evidence_id,
           attributes->>'otel_agent.citation.text' AS citation_text,
           attributes->>'otel_agent.citation.status' AS status,
           trace_id
    FROM found
    WHERE name = 'otel_agent.citation' AND record_kind = 'citation' AND record_ref = wanted
      AND record_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY record_id ORDER BY start_time, trace_id, span_id) = 1
),
ev AS MATERIALIZED (
    SELECT e.*, coalesce(v.status, 'unreviewed') AS status
    FROM (
        SELECT record_id AS evidence_id,
               record_ref AS source_id,
               attributes->>'otel_agent.evidence.excerpt' AS excerpt,
               attributes->>'otel_agent.evidence.confidence' AS confidence,
               NULL::DOUBLE AS score,
               'otel_agent' AS origin,
               attributes->>'otel_agent.run.id' AS run_id,
               attributes->>'otel_agent.step.id' AS step_id,
               attributes->>'otel_agent.evidence.supports_step' AS supports_step,
               unnest(oa_action_binding(attributes)),  -- action_run_id, action_config_hash, action_variant
               trace_id, span_id, start_time AS recorded_at
        FROM found
        WHERE name = 'otel_agent.evidence_item' AND record_kind = 'evidence_item'
        UNION ALL
        SELECT 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index,
               coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index),
               content, NULL, score, origin, run_id, step_id, NULL, NULL, NULL, NULL, trace_id, span_id, end_time
        FROM documents
    ) e
    LEFT JOIN verdicts v ON v.target_kind = 'evidence_item' AND v.target_id = e.evidence_id
    WHERE e.evidence_id IN (SELECT evidence_id FROM ci)
    QUALIFY row_number() OVER (PARTITION BY e.evidence_id ORDER BY e.recorded_at, e.trace_id, e.span_id) = 1
),
src AS MATERIALIZED (
    SELECT * FROM (
        SELECT record_id AS source_id,
               attributes->>'otel_agent.source.url' AS url,
               attributes->>'otel_agent.source.title' AS title,
               attributes->>'otel_agent.source.provider' AS provider,
               coalesce(timezone('UTC', TRY_CAST(attributes->>'otel_agent.source.retrieved_at' AS TIMESTAMPTZ)),
                        start_time::TIMESTAMP) AS retrieved_at,
               trace_id, span_id, start_time AS recorded_at
        FROM found
        WHERE name = 'otel_agent.source' AND record_kind = 'source'
        UNION ALL
        SELECT coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index), url, title,
               provider, end_time::TIMESTAMP, trace_id, span_id, end_time
        FROM documents
    )
    WHERE source_id IN (SELECT source_id FROM ev)
    QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recorded_at, trace_id, span_id) = 1
),
-- the claim's action binding (evidence bound to another action supports nothing: 025_action_bindings.sql)
claim_action AS MATERIALIZED (
    SELECT attributes->>'otel_agent.action.run_id' AS run_id,
           attributes->>'otel_agent.action.config_hash' AS config_hash,
           attributes->>'otel_agent.action.variant' AS variant
    FROM found
    WHERE name = 'otel_agent.claim' AND record_kind = 'claim' AND record_id = wanted
    ORDER BY start_time, trace_id, span_id LIMIT 1
),
-- 4. one row per citation, and the claim's status by the rules of claim_support
paths AS MATERIALIZED (
    SELECT ci.citation_id, ci.citation_text, ci.status, ci.evidence_id, ci.trace_id,
           e.evidence_id IS NOT NULL AS evidence_found,
           e.status AS evidence_status,
           coalesce(ca.run_id <> e.action_run_id OR ca.config_hash <> e.action_config_hash
                    OR ca.variant <> e.action_variant, false) AS binding_mismatch,
           coalesce(ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected'
                    AND NOT coalesce(ca.run_id <> e.action_run_id OR ca.config_hash <> e.action_config_hash
                                     OR ca.variant <> e.action_variant, false), false) AS supports,
           e.excerpt, e.confidence AS evidence_confidence, e.score AS evidence_score, e.origin AS evidence_origin,
           e.run_id AS evidence_run_id, e.step_id AS evidence_step_id, e.supports_step, e.source_id,
           e.trace_id AS evidence_trace_id,
           s.url AS source_url, s.title AS source_title, s.provider AS source_provider,
           s.retrieved_at AS source_retrieved_at, s.trace_id AS source_trace_id
    FROM ci
    LEFT JOIN ev e ON e.evidence_id = ci.evidence_id
    LEFT JOIN src s ON s.source_id = e.source_id
    LEFT JOIN claim_action ca ON true
),
-- conflicts not resolved that list the claim, or evidence it cites validly
open_conflicts AS (
    SELECT count(*) AS n
    FROM (
        SELECT record_id,
               coalesce(from_json(attributes->'otel_agent.conflict.claim_ids', '["VARCHAR"]'), []) AS claim_ids,
               coalesce(from_json(attributes->'otel_agent.conflict.evidence_ids', '["VARCHAR"]'), []) AS evidence_ids
        FROM found
        WHERE name = 'otel_agent.conflict' AND record_kind = 'conflict' AND record_id IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY record_id ORDER BY start_time, trace_id, span_id) = 1
    ) x
    LEFT JOIN verdicts v ON v.target_kind = 'conflict' AND v.target_id = x.record_id
    WHERE v.status IS DISTINCT FROM 'resolved'
      AND (list_contains(x.claim_ids, wanted)
           OR len(list_intersect(x.evidence_ids,
                                 (SELECT coalesce(list(evidence_id), []) FROM paths WHERE status = 'valid'))) > 0)
),
judged AS (
    SELECT CASE
               WHEN v.status = 'rejected' THEN 'rejected'
               WHEN (SELECT n FROM open_conflicts) > 0 THEN 'conflicted'
               WHEN (SELECT count(*) FROM paths WHERE supports) > 0 OR v.status = 'approved' THEN 'supported'
               ELSE 'unverified'
           END AS claim_status
    FROM (SELECT 1) LEFT JOIN verdicts v ON v.target_kind = 'claim' AND v.target_id = wanted
)
SELECT c.record_id AS claim_id,
       c.attributes->>'otel_agent.claim.text' AS claim_text,
       c.attributes->>'otel_agent.claim.confidence' AS claim_confidence,
       (SELECT claim_status FROM judged) AS claim_status,
       c.attributes->>'otel_agent.claim.artifact_version_id' AS artifact_version_id,
       c.attributes->>'otel_agent.run.id' AS claim_run_id,
       p.citation_id,
       p.citation_text,
       p.status AS citation_status,
       p.evidence_id,
       coalesce(p.evidence_found, false) AS evidence_found,
       p.excerpt,
       p.evidence_confidence,
       p.evidence_score,
       p.evidence_status,
       p.evidence_origin,
       p.evidence_run_id,
       p.evidence_step_id,
       p.supports_step,
       coalesce(p.supports, false) AS supports,
       p.source_id,
       p.source_url,
       p.source_title,
       p.source_provider,
       p.source_retrieved_at,
       c.trace_id AS claim_trace_id,
       p.trace_id AS citation_trace_id,
       p.evidence_trace_id,
       p.source_trace_id,
       coalesce(p.binding_mismatch, false) AS binding_mismatch
FROM (SELECT * FROM found
      WHERE name = 'otel_agent.claim' AND record_kind = 'claim' AND record_id = wanted
      ORDER BY start_time, trace_id, span_id LIMIT 1) c
LEFT JOIN paths p ON true;
