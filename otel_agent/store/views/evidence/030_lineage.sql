-- Claim support and claim → citation → evidence item → source lineage (docs/views-evidence.md).
--
-- A citation supports its claim when its status is `valid` and the evidence item it cites is recorded and not
-- rejected by a reviewer. A conflict that is not resolved makes every claim it names conflicted, and so does
-- one naming evidence the claim validly cites. Evidence produced for another action than the claim is about
-- (evidence_binding_mismatches, 025) does not support it.

CREATE OR REPLACE VIEW claim_support AS
WITH paths AS (
    SELECT ci.claim_id, ci.citation_id, ci.status AS citation_status, ci.evidence_id,
           e.evidence_id IS NOT NULL AS evidence_found,
           e.status AS evidence_status,
           m.citation_id IS NOT NULL AS binding_mismatch,
           ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected' AND m.citation_id IS NULL
               AS supports
    FROM citations ci
    LEFT JOIN evidence_items e ON e.evidence_id = ci.evidence_id
    LEFT JOIN evidence_binding_mismatches m ON m.citation_id = ci.citation_id
),
support AS (
    SELECT claim_id,
           count(*) AS citations,
           count(*) FILTER (WHERE citation_status = 'valid') AS valid_citations,
           count(DISTINCT evidence_id) FILTER (WHERE supports) AS supporting_evidence,
           count(DISTINCT evidence_id) FILTER (WHERE evidence_status = 'rejected') AS rejected_evidence,
           count(DISTINCT evidence_id) FILTER (WHERE NOT evidence_found) AS missing_evidence,
           count(DISTINCT evidence_id) FILTER (WHERE binding_mismatch) AS mismatched_evidence
    FROM paths
    GROUP BY claim_id
),
unresolved AS (
    SELECT conflict_id, claim_ids, evidence_ids FROM conflicts WHERE status <> 'resolved'
),
conflict_claims AS (
    SELECT u.claim_id, c.conflict_id
    FROM unresolved c, unnest(c.claim_ids) AS u(claim_id)
    UNION
    SELECT p.claim_id, x.conflict_id
    FROM (SELECT c.conflict_id, u.evidence_id FROM unresolved c, unnest(c.evidence_ids) AS u(evidence_id)) x
    JOIN paths p ON p.evidence_id = x.evidence_id AND p.citation_status = 'valid'
),
open_conflicts AS (
    SELECT claim_id, list(DISTINCT conflict_id ORDER BY conflict_id) AS conflict_ids
    FROM conflict_claims
    GROUP BY claim_id
),
judged AS (
    SELECT cl.claim_id, cl.text, cl.confidence, cl.run_id, cl.artifact_version_id,
           coalesce(s.citations, 0) AS citations,
           coalesce(s.valid_citations, 0) AS valid_citations,
           coalesce(s.supporting_evidence, 0) AS supporting_evidence,
           coalesce(s.rejected_evidence, 0) AS rejected_evidence,
           coalesce(s.missing_evidence, 0) AS missing_evidence,
           coalesce(s.mismatched_evidence, 0) AS mismatched_evidence,
           coalesce(oc.conflict_ids, []::VARCHAR[]) AS open_conflict_ids,
           r.status AS review_status, r.reviewed_by, r.reviewed_at, r.review_reason
    FROM claims cl
    LEFT JOIN support s USING (claim_id)
    LEFT JOIN open_conflicts oc USING (claim_id)
    LEFT JOIN oa_reviews_of('claim') r ON r.target_id = cl.claim_id
)
SELECT claim_id, text, confidence, run_id, artifact_version_id,
       CASE
           WHEN review_status = 'rejected' THEN 'rejected'
           WHEN len(open_conflict_ids) > 0 THEN 'conflicted'
           WHEN supporting_evidence > 0 OR review_status = 'approved' THEN 'supported'
           ELSE 'unverified'
       END AS status,
       CASE
           WHEN review_status = 'rejected'
               THEN 'rejected by ' || reviewed_by || coalesce(': ' || review_reason, '')
           WHEN len(open_conflict_ids) > 0
               THEN 'in unresolved conflict ' || array_to_string(open_conflict_ids, ', ')
           WHEN supporting_evidence > 0
               THEN supporting_evidence || ' evidence item(s) cited validly and not rejected'
           WHEN review_status = 'approved'
               THEN 'approved by ' || reviewed_by || ' without supporting evidence'
           WHEN citations = 0 THEN 'no citation'
           WHEN valid_citations = 0 THEN 'no valid citation (only weak or invalid ones)'
           WHEN mismatched_evidence > 0
               THEN mismatched_evidence || ' cited evidence item(s) produced for another action (binding mismatch)'
           WHEN rejected_evidence > 0 AND missing_evidence = 0 THEN 'all cited evidence was rejected by review'
           ELSE 'cited evidence is not recorded'
       END AS why,
       citations, valid_citations, supporting_evidence, rejected_evidence, missing_evidence, open_conflict_ids,
       review_status, reviewed_by, reviewed_at, mismatched_evidence
FROM judged;

-- One row per path claim → citation → evidence item → source (a claim without citations: one row with NULL
-- citation columns).
CREATE OR REPLACE VIEW claim_lineage AS
SELECT c.claim_id,
       c.text AS claim_text,
       c.confidence AS claim_confidence,
       cs.status AS claim_status,
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
       coalesce(ci.status = 'valid' AND e.evidence_id IS NOT NULL AND e.status <> 'rejected'
                AND m.citation_id IS NULL, false) AS supports,
       e.source_id,
       s.url AS source_url,
       s.title AS source_title,
       s.provider AS source_provider,
       s.retrieved_at AS source_retrieved_at,
       c.trace_id AS claim_trace_id,
       ci.trace_id AS citation_trace_id,
       e.trace_id AS evidence_trace_id,
       s.trace_id AS source_trace_id,
       m.citation_id IS NOT NULL AS binding_mismatch
FROM claims c
JOIN claim_support cs USING (claim_id)
LEFT JOIN citations ci ON ci.claim_id = c.claim_id
LEFT JOIN evidence_items e ON e.evidence_id = ci.evidence_id
LEFT JOIN evidence_binding_mismatches m ON m.citation_id = ci.citation_id
LEFT JOIN sources s ON s.source_id = e.source_id;
