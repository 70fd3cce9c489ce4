-- claim_lineage_of(claim_id): the rows of `claim_lineage WHERE claim_id = ?`, computed for that claim only
-- (docs/views-evidence.md). The view derives every claim's support before filtering; this macro looks up the
-- spans that name the claim, then those that name the evidence its citations cite, then those that name the
-- sources of that evidence: three lookups through lineage_keys (store/schema/060_lineage_keys.sql), each
-- reading only the row groups of `spans` that hold the ids it follows and re-checking the ids themselves.
-- It judges the one claim by the rules of claim_support. tests/derived_evidence checks that both give the same
-- rows. Assumes record ids are unique per kind (as the instrumentation mints them).
--
-- Kept small on purpose: DuckDB plans a table macro anew on every call (it cannot PREPARE one with a
-- parameter), and planning grows with every CTE and join; each one here costs ~0.5–1 ms of the < 20 ms budget
-- (bench/derive_evidence.py).

CREATE OR REPLACE MACRO claim_lineage_of(wanted) AS TABLE
WITH
-- 1. the spans that name the claim: the claim itself, its citations, conflicts that list it
named_claim AS MATERIALIZED (
    SELECT name, record_kind, record_id, record_ref, attributes, trace_id, span_id, start_time
    FROM spans
    WHERE end_time IN (SELECT end_time FROM lineage_keys WHERE key = lineage_key(wanted))
      AND ((name = 'otel_agent.claim' AND record_kind = 'claim' AND record_id = wanted)
           OR (name = 'otel_agent.citation' AND record_kind = 'citation' AND record_ref = wanted
               AND record_id IS NOT NULL)
           OR (name = 'otel_agent.conflict' AND record_kind = 'conflict' AND record_id IS NOT NULL))
),
ci AS MATERIALIZED (
    SELECT record_id AS citation_id,
           attributes->>'otel_agent.citation.evidence_id' AS evidence_id,
           attributes->>'otel_agent.citation.text' AS citation_text,
           attributes->>'otel_agent.citation.status' AS status,
           trace_id
    FROM named_claim
    WHERE record_kind = 'citation'
    QUALIFY row_number() OVER (PARTITION BY record_id ORDER BY start_time, trace_id, span_id) = 1
),
-- 2. the spans that name the cited evidence: our evidence items, conflicts that list them, and the retrieval
-- spans of evidence 'retrieval:<trace>:<span>:<n>' (document n of that span)
named_evidence AS MATERIALIZED (
    SELECT name, scope_name, record_kind, record_id, record_ref, attributes, trace_id, span_id, start_time, end_time
    FROM spans
    WHERE end_time IN (SELECT end_time FROM lineage_keys
                       WHERE key IN (SELECT unnest(lineage_lookup_keys(evidence_id)) FROM ci))
      AND ((name = 'otel_agent.evidence_item' AND record_kind = 'evidence_item'
            AND record_id IN (SELECT evidence_id FROM ci))
           OR (name = 'otel_agent.conflict' AND record_kind = 'conflict' AND record_id IS NOT NULL)
           OR is_retrieval_span(name, scope_name))
),
-- document n of each cited retrieval span (computed once: a macro's expression repeats wherever a column that
-- holds it is used, unless it is materialised)
cited_documents AS MATERIALIZED (
    SELECT c.evidence_id, r.trace_id, r.span_id, r.end_time, r.n,
           r.attributes->>'otel_agent.run.id' AS run_id, r.attributes->>'otel_agent.step.id' AS step_id,
           retrieval_document_at(r.attributes, r.n) AS d
    FROM ci c
    JOIN (SELECT *, unnest(retrieval_document_indexes(attributes)) AS n
          FROM named_evidence
          WHERE is_retrieval_span(name, scope_name)
          QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time) = 1) r
      ON c.evidence_id = 'retrieval:' || r.trace_id || ':' || r.span_id || ':' || r.n
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
               trace_id, span_id, start_time AS recorded_at
        FROM named_evidence
        WHERE record_kind = 'evidence_item'
        UNION ALL
        SELECT evidence_id, coalesce(d.document_id, 'doc:' || trace_id || ':' || span_id || ':' || n),
               d.content, NULL, d.score, d.origin, run_id, step_id, NULL, trace_id, span_id, end_time
        FROM cited_documents
        WHERE d IS NOT NULL
    ) e
    LEFT JOIN review_verdicts v ON v.target_kind = 'evidence_item' AND v.target_id = e.evidence_id
    QUALIFY row_number() OVER (PARTITION BY e.evidence_id ORDER BY e.recorded_at, e.trace_id, e.span_id) = 1
),
-- 3. the spans that name their sources: our source records and retrieval spans with documents of that id
named_sources AS MATERIALIZED (
    SELECT name, scope_name, record_kind, record_id, attributes, trace_id, span_id, start_time, end_time
    FROM spans
    WHERE end_time IN (SELECT end_time FROM lineage_keys
                       WHERE key IN (SELECT unnest(lineage_lookup_keys(source_id)) FROM ev))
      AND ((name = 'otel_agent.source' AND record_kind = 'source' AND record_id IN (SELECT source_id FROM ev))
           OR is_retrieval_span(name, scope_name))
),
source_documents AS MATERIALIZED (
    SELECT trace_id, span_id, end_time, n, retrieval_provider(attributes) AS provider,
           retrieval_document_at(attributes, n) AS d
    FROM (SELECT *, unnest(retrieval_document_indexes(attributes)) AS n
          FROM named_sources
          WHERE is_retrieval_span(name, scope_name)
          QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time) = 1)
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
        FROM named_sources
        WHERE record_kind = 'source'
        UNION ALL
        SELECT coalesce(d.document_id, 'doc:' || trace_id || ':' || span_id || ':' || n), d.url, d.title,
               provider, end_time::TIMESTAMP, trace_id, span_id, end_time
        FROM source_documents
        WHERE d IS NOT NULL
    )
    WHERE source_id IN (SELECT source_id FROM ev)
    QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recorded_at, trace_id, span_id) = 1
),
-- 4. one row per citation, and the claim's status by the rules of claim_support
paths AS MATERIALIZED (
    SELECT ci.citation_id, ci.citation_text, ci.status, ci.evidence_id, ci.trace_id,
           e.evidence_id IS NOT NULL AS evidence_found,
           e.status AS evidence_status,
           coalesce(ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected', false) AS supports,
           e.excerpt, e.confidence AS evidence_confidence, e.score AS evidence_score, e.origin AS evidence_origin,
           e.run_id AS evidence_run_id, e.step_id AS evidence_step_id, e.supports_step, e.source_id,
           e.trace_id AS evidence_trace_id,
           s.url AS source_url, s.title AS source_title, s.provider AS source_provider,
           s.retrieved_at AS source_retrieved_at, s.trace_id AS source_trace_id
    FROM ci
    LEFT JOIN ev e ON e.evidence_id = ci.evidence_id
    LEFT JOIN src s ON s.source_id = e.source_id
),
-- conflicts not resolved that list the claim, or evidence it cites validly
open_conflicts AS (
    SELECT count(*) AS n
    FROM (
        SELECT record_id,
               coalesce(from_json(attributes->'otel_agent.conflict.claim_ids', '["VARCHAR"]'), []) AS claim_ids,
               coalesce(from_json(attributes->'otel_agent.conflict.evidence_ids', '["VARCHAR"]'), []) AS evidence_ids
        FROM (SELECT record_kind, record_id, attributes, trace_id, span_id, start_time FROM named_claim
              UNION ALL
              SELECT record_kind, record_id, attributes, trace_id, span_id, start_time FROM named_evidence)
        WHERE record_kind = 'conflict'
        QUALIFY row_number() OVER (PARTITION BY record_id ORDER BY start_time, trace_id, span_id) = 1
    ) x
    LEFT JOIN review_verdicts v ON v.target_kind = 'conflict' AND v.target_id = x.record_id
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
    FROM (SELECT 1) LEFT JOIN review_verdicts v ON v.target_kind = 'claim' AND v.target_id = wanted
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
       p.source_trace_id
FROM (SELECT * FROM named_claim WHERE record_kind = 'claim' ORDER BY start_time, trace_id, span_id LIMIT 1) c
LEFT JOIN paths p ON true;
