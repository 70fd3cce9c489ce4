-- Seed 000's quality metrics (its metric taxonomy's fifth family), per run, in run_metrics' long form.
--
-- quality_metrics_for_run(rid): per run, from its claims (claim_support), citations, verifier results and the
-- human verdicts in force on its records (review_verdicts). Counts have a row whenever their family has data in
-- the run (0 included); a ratio whose denominator is 0 has no row (never a 0 meaning "nothing to judge"):
--   quality.claims                      claims recorded in the run
--   quality.claims.supported            claim_support.status = 'supported' (a valid citation of unrejected,
--   quality.claims.unverified           ... evidence, or a reviewer's approval), 'unverified' (no support yet),
--   quality.claims.conflicted           ... 'conflicted' (in an unresolved conflict),
--   quality.claims.rejected             ... 'rejected' (by a reviewer)
--   quality.supported_claim_ratio       supported / claims
--   quality.evidence_coverage           claims with at least one citation recorded valid / claims
--   quality.citation_validity           citations recorded valid / citations
--   quality.verifier_results            verifier results with an outcome
--   quality.verifier_pass_rate          verifier results that passed / verifier results with an outcome
--   quality.verifier_score_avg          mean verifier score (the results that give one)
--   quality.human.approvals             the run's claims, evidence items, artifact versions and decisions whose
--   quality.human.rejections            ... verdict in force is approved / rejected (review_verdicts)
--   quality.review_approval_rate        approvals / (approvals + rejections)
-- The evidence views are whole-store views (claim support needs every review and conflict); with a run id the
-- filters below are pushed into their scans of the record spans, so one run reads its own records.
CREATE OR REPLACE MACRO quality_metrics_for_run(rid) AS TABLE
WITH claim_counts AS (
    SELECT run_id,
           count(*) AS claims,
           count(*) FILTER (WHERE status = 'supported') AS supported,
           count(*) FILTER (WHERE status = 'unverified') AS unverified,
           count(*) FILTER (WHERE status = 'conflicted') AS conflicted,
           count(*) FILTER (WHERE status = 'rejected') AS rejected,
           count(*) FILTER (WHERE valid_citations > 0) AS covered
    FROM claim_support
    WHERE run_id IS NOT NULL AND (rid IS NULL OR run_id = rid)
    GROUP BY run_id
),
citation_counts AS (
    SELECT run_id, count(*) AS citations, count(*) FILTER (WHERE status = 'valid') AS valid
    FROM citations
    WHERE run_id IS NOT NULL AND (rid IS NULL OR run_id = rid)
    GROUP BY run_id
),
verifier_counts AS (
    SELECT run_id,
           count(*) FILTER (WHERE passed IS NOT NULL) AS judged,
           count(*) FILTER (WHERE passed) AS passed,
           avg(score) AS score_avg
    FROM verifier_results_for_run(rid)
    WHERE run_id IS NOT NULL
    GROUP BY run_id
),
reviewed AS (
    SELECT t.run_id, v.status
    FROM (
        SELECT 'claim' AS kind, claim_id AS id, run_id FROM claims
        UNION ALL SELECT 'evidence_item', evidence_id, run_id FROM evidence_items
        UNION ALL SELECT 'artifact_version', version_id, run_id FROM artifact_versions
        UNION ALL SELECT 'decision', decision_id, run_id FROM decisions
    ) AS t
    JOIN review_verdicts AS v ON v.target_kind = t.kind AND v.target_id = t.id
    WHERE t.run_id IS NOT NULL AND (rid IS NULL OR t.run_id = rid) AND v.status IN ('approved', 'rejected')
),
review_counts AS (
    SELECT run_id,
           count(*) FILTER (WHERE status = 'approved') AS approved,
           count(*) FILTER (WHERE status = 'rejected') AS rejected
    FROM reviewed
    GROUP BY run_id
),
long AS (
    SELECT run_id,
           unnest([
               {'metric': 'quality.claims', 'value': claims},
               {'metric': 'quality.claims.supported', 'value': supported},
               {'metric': 'quality.claims.unverified', 'value': unverified},
               {'metric': 'quality.claims.conflicted', 'value': conflicted},
               {'metric': 'quality.claims.rejected', 'value': rejected}
           ], recursive := true)
    FROM claim_counts
    UNION ALL
    SELECT run_id, 'quality.supported_claim_ratio', supported / claims FROM claim_counts WHERE claims > 0
    UNION ALL
    SELECT run_id, 'quality.evidence_coverage', covered / claims FROM claim_counts WHERE claims > 0
    UNION ALL
    SELECT run_id, 'quality.citation_validity', valid / citations FROM citation_counts WHERE citations > 0
    UNION ALL
    SELECT run_id, 'quality.verifier_results', judged FROM verifier_counts WHERE judged > 0
    UNION ALL
    SELECT run_id, 'quality.verifier_pass_rate', passed / judged FROM verifier_counts WHERE judged > 0
    UNION ALL
    SELECT run_id, 'quality.verifier_score_avg', score_avg FROM verifier_counts WHERE score_avg IS NOT NULL
    UNION ALL
    SELECT run_id, unnest(['quality.human.approvals', 'quality.human.rejections']), unnest([approved, rejected])
    FROM review_counts
    UNION ALL
    SELECT run_id, 'quality.review_approval_rate', approved / (approved + rejected) FROM review_counts
)
SELECT run_id, metric, CAST(value AS DOUBLE) AS value,
       CASE WHEN metric LIKE '%_ratio' OR metric LIKE '%_rate' OR metric LIKE '%_avg' OR metric LIKE '%_coverage'
                 OR metric LIKE '%_validity' THEN '1'
            ELSE '{count}' END AS unit
FROM long;

-- quality_metrics: the earlier view, kept for its readers: quality_metrics_for_run's ratios and score and the
-- claim count, for every run (docs/views-evidence.md, "Quality metrics"). One definition: the macro above.
CREATE OR REPLACE VIEW quality_metrics AS
SELECT run_id, metric, value, unit
FROM quality_metrics_for_run(NULL)
WHERE metric IN ('quality.claims', 'quality.supported_claim_ratio', 'quality.citation_validity',
                 'quality.verifier_pass_rate', 'quality.verifier_score_avg', 'quality.review_approval_rate');
