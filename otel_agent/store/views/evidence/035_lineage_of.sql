-- claim_lineage_of(claim_id): the rows of `claim_lineage WHERE claim_id = ?`, computed for that claim only
-- (docs/views-evidence.md). The view derives every claim's support before filtering; this macro follows the
-- ids (claim → citations → evidence → sources) through the typed record_kind / record_id / record_ref columns
-- (fold/promoted.py), parses the JSON of just the records it finds, and judges the one claim with the same
-- rules as claim_support. tests/derived_evidence checks that both give the same rows. Assumes record ids are
-- unique per kind (as the instrumentation mints them).

CREATE OR REPLACE MACRO claim_lineage_of(wanted) AS TABLE
WITH
-- 1. the claim and its citations: both name the claim id
claim_spans AS MATERIALIZED (
    SELECT name,
           json_extract_string(attributes, [
               '$."otel_agent.record.kind"', '$."otel_agent.claim.id"', '$."otel_agent.claim.text"',
               '$."otel_agent.claim.confidence"', '$."otel_agent.claim.artifact_version_id"', '$."otel_agent.run.id"',
               '$."otel_agent.citation.id"', '$."otel_agent.citation.claim_id"',
               '$."otel_agent.citation.evidence_id"', '$."otel_agent.citation.text"',
               '$."otel_agent.citation.status"']) AS a,
           trace_id, span_id, start_time
    FROM (
        -- record_id / record_ref: the typed copies of the claim's id and of the citation's claim id
        -- (fold/promoted.py). One scan per kind: equalities joined by AND are pushed into the scan, so the JSON
        -- of other spans is never read (an OR of the two is applied after the scan, to every row's JSON).
        SELECT * FROM spans WHERE name = 'otel_agent.claim' AND record_kind = 'claim' AND record_id = wanted
        UNION ALL
        SELECT * FROM spans WHERE name = 'otel_agent.citation' AND record_kind = 'citation' AND record_ref = wanted
    )
),
c AS MATERIALIZED (
    SELECT a[2] AS claim_id, a[3] AS text, a[4] AS confidence, a[5] AS artifact_version_id, a[6] AS run_id,
           trace_id, span_id, start_time AS recorded_at
    FROM claim_spans
    WHERE name = 'otel_agent.claim' AND a[1] = 'claim' AND a[2] = wanted
    QUALIFY row_number() OVER (ORDER BY recorded_at, trace_id, span_id) = 1
),
ci AS MATERIALIZED (
    SELECT a[7] AS citation_id, a[8] AS claim_id, a[9] AS evidence_id, a[10] AS citation_text, a[11] AS status,
           trace_id, span_id, start_time AS recorded_at
    FROM claim_spans
    WHERE name = 'otel_agent.citation' AND a[1] = 'citation' AND a[8] = wanted AND a[7] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY citation_id ORDER BY recorded_at, trace_id, span_id) = 1
),
wanted_evidence AS MATERIALIZED (
    SELECT DISTINCT evidence_id FROM ci WHERE evidence_id IS NOT NULL
),
-- 2. the cited evidence: our records, and retrieval documents of other conventions ('retrieval:<trace>:<span>:<n>')
evidence_spans AS MATERIALIZED (
    SELECT json_extract_string(attributes, [
               '$."otel_agent.record.kind"', '$."otel_agent.evidence.id"', '$."otel_agent.evidence.source_id"',
               '$."otel_agent.evidence.excerpt"', '$."otel_agent.evidence.confidence"',
               '$."otel_agent.evidence.supports_step"', '$."otel_agent.run.id"', '$."otel_agent.step.id"']) AS a,
           trace_id, span_id, start_time
    FROM spans
    WHERE name = 'otel_agent.evidence_item' AND record_kind = 'evidence_item'
      AND record_id IN (SELECT evidence_id FROM wanted_evidence)
),
documents AS MATERIALIZED (
    SELECT *
    FROM retrieval_documents_of(false, (
        SELECT coalesce(list(DISTINCT {'trace_id': split_part(evidence_id, ':', 2),
                                       'span_id': split_part(evidence_id, ':', 3)}), [])
        FROM wanted_evidence
        WHERE starts_with(evidence_id, 'retrieval:')))
),
evidence AS MATERIALIZED (
    SELECT * FROM (
        SELECT a[2] AS evidence_id, a[3] AS source_id, a[4] AS excerpt, a[5] AS confidence, NULL::DOUBLE AS score,
               'otel_agent' AS origin, a[7] AS run_id, a[8] AS step_id, a[6] AS supports_step,
               trace_id, span_id, start_time AS recorded_at
        FROM evidence_spans
        WHERE a[1] = 'evidence_item' AND a[2] IN (SELECT evidence_id FROM wanted_evidence)
        UNION ALL
        SELECT 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index,
               coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index),
               content, NULL, score, origin, run_id, step_id, NULL, trace_id, span_id, recorded_at
        FROM documents
        WHERE 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index IN (SELECT evidence_id FROM wanted_evidence)
    )
    QUALIFY row_number() OVER (PARTITION BY evidence_id ORDER BY recorded_at, trace_id, span_id) = 1
),
evidence_reviewed AS MATERIALIZED (
    SELECT e.*, coalesce(r.status, 'unreviewed') AS status
    FROM evidence e
    LEFT JOIN review_status r ON r.target_kind = 'evidence_item' AND r.target_id = e.evidence_id
),
-- 3. their sources
wanted_sources AS MATERIALIZED (
    SELECT DISTINCT source_id FROM evidence WHERE source_id IS NOT NULL
),
source_spans AS MATERIALIZED (
    SELECT json_extract_string(attributes, [
               '$."otel_agent.record.kind"', '$."otel_agent.source.id"', '$."otel_agent.source.url"',
               '$."otel_agent.source.title"', '$."otel_agent.source.provider"',
               '$."otel_agent.source.retrieved_at"']) AS a,
           trace_id, span_id, start_time
    FROM spans
    WHERE name = 'otel_agent.source' AND record_kind = 'source'
      AND record_id IN (SELECT source_id FROM wanted_sources)
),
sources_found AS MATERIALIZED (
    SELECT * FROM (
        SELECT a[2] AS source_id, a[3] AS url, a[4] AS title, a[5] AS provider,
               coalesce(timezone('UTC', TRY_CAST(a[6] AS TIMESTAMPTZ)), start_time::TIMESTAMP) AS retrieved_at,
               trace_id, span_id, start_time AS recorded_at
        FROM source_spans
        WHERE a[1] = 'source' AND a[2] IN (SELECT source_id FROM wanted_sources)
        UNION ALL
        SELECT coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index), url, title, provider,
               retrieved_at, trace_id, span_id, recorded_at
        FROM documents
    )
    WHERE source_id IN (SELECT source_id FROM wanted_sources)
    QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recorded_at, trace_id, span_id) = 1
),
-- 4. the claim's status, by the rules of claim_support
paths AS MATERIALIZED (
    SELECT ci.*, e.evidence_id IS NOT NULL AS evidence_found, e.status AS evidence_status,
           ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected' AS supports
    FROM ci LEFT JOIN evidence_reviewed e ON e.evidence_id = ci.evidence_id
),
support AS MATERIALIZED (
    SELECT count(*) AS citations,
           count(*) FILTER (WHERE status = 'valid') AS valid_citations,
           count(DISTINCT evidence_id) FILTER (WHERE supports) AS supporting_evidence,
           count(DISTINCT evidence_id) FILTER (WHERE evidence_status = 'rejected') AS rejected_evidence,
           count(DISTINCT evidence_id) FILTER (WHERE NOT evidence_found) AS missing_evidence
    FROM paths
),
open_conflicts AS MATERIALIZED (
    SELECT coalesce(list(DISTINCT conflict_id ORDER BY conflict_id), []::VARCHAR[]) AS ids
    FROM conflicts x
    WHERE x.status <> 'resolved'
      AND (list_contains(x.claim_ids, wanted)
           OR len(list_intersect(x.evidence_ids,
                                 (SELECT coalesce(list(evidence_id), []) FROM paths WHERE status = 'valid'))) > 0)
),
review AS MATERIALIZED (
    SELECT status, decided_by, decision_reason FROM review_status WHERE target_kind = 'claim' AND target_id = wanted
),
judged AS MATERIALIZED (
    SELECT CASE
               WHEN (SELECT status FROM review) = 'rejected' THEN 'rejected'
               WHEN len(o.ids) > 0 THEN 'conflicted'
               WHEN s.supporting_evidence > 0 OR (SELECT status FROM review) = 'approved' THEN 'supported'
               ELSE 'unverified'
           END AS claim_status
    FROM support s, open_conflicts o
)
SELECT c.claim_id,
       c.text AS claim_text,
       c.confidence AS claim_confidence,
       j.claim_status,
       c.artifact_version_id,
       c.run_id AS claim_run_id,
       ci.citation_id,
       ci.citation_text,
       ci.status AS citation_status,
       ci.evidence_id,
       e.evidence_id IS NOT NULL AS evidence_found,
       e.excerpt,
       e.confidence AS evidence_confidence,
       e.score AS evidence_score,
       e.status AS evidence_status,
       e.origin AS evidence_origin,
       e.run_id AS evidence_run_id,
       e.step_id AS evidence_step_id,
       e.supports_step,
       coalesce(ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected', false) AS supports,
       e.source_id,
       s.url AS source_url,
       s.title AS source_title,
       s.provider AS source_provider,
       s.retrieved_at AS source_retrieved_at,
       c.trace_id AS claim_trace_id,
       ci.trace_id AS citation_trace_id,
       e.trace_id AS evidence_trace_id,
       s.trace_id AS source_trace_id
FROM c
CROSS JOIN judged j
LEFT JOIN ci ON true
LEFT JOIN evidence_reviewed e ON e.evidence_id = ci.evidence_id
LEFT JOIN sources_found s ON s.source_id = e.source_id;
