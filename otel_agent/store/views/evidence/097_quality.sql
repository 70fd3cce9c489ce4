-- quality_metrics: seed 000's quality metrics, per run, in run_metrics' long form (run_id, metric, value, unit;
-- docs/views-evidence.md, "Quality metrics"), from the verifier results and the evidence and review records:
--   quality.claims                  claims recorded in the run
--   quality.supported_claim_ratio   claims whose status (claim_support) is supported / claims
--   quality.citation_validity       citations recorded valid / citations
--   quality.verifier_pass_rate      verifier results that passed / verifier results with an outcome
--   quality.verifier_score_avg      mean verifier score (the results that give one)
--   quality.review_approval_rate    approved / approved + rejected, over the run's reviewed claims, evidence
--                                   items, artifact versions and decisions (a human's verdict in force)
-- A ratio whose denominator is 0 is left out (no row), never 0. A view of its own, not rows of run_metrics:
-- these read the evidence views over the whole store, which run_metrics_for_run(run_id) must not.
CREATE OR REPLACE VIEW quality_metrics AS
WITH claim_counts AS (
    SELECT run_id,
           count(*) AS claims,
           count(*) FILTER (WHERE status = 'supported') AS supported
    FROM claim_support
    WHERE run_id IS NOT NULL
    GROUP BY run_id
),
citation_counts AS (
    SELECT run_id, count(*) AS citations, count(*) FILTER (WHERE status = 'valid') AS valid
    FROM citations
    WHERE run_id IS NOT NULL
    GROUP BY run_id
),
verifier_counts AS (
    SELECT run_id,
           count(*) FILTER (WHERE passed IS NOT NULL) AS judged,
           count(*) FILTER (WHERE passed) AS passed,
           avg(score) AS score_avg
    FROM verifier_results
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
    WHERE t.run_id IS NOT NULL AND v.status IN ('approved', 'rejected')
),
review_counts AS (
    SELECT run_id, count(*) AS decided, count(*) FILTER (WHERE status = 'approved') AS approved
    FROM reviewed
    GROUP BY run_id
),
long AS (
    SELECT run_id, 'quality.claims' AS metric, CAST(claims AS DOUBLE) AS value FROM claim_counts
    UNION ALL
    SELECT run_id, 'quality.supported_claim_ratio', supported / claims FROM claim_counts WHERE claims > 0
    UNION ALL
    SELECT run_id, 'quality.citation_validity', valid / citations FROM citation_counts WHERE citations > 0
    UNION ALL
    SELECT run_id, 'quality.verifier_pass_rate', passed / judged FROM verifier_counts WHERE judged > 0
    UNION ALL
    SELECT run_id, 'quality.verifier_score_avg', score_avg FROM verifier_counts WHERE score_avg IS NOT NULL
    UNION ALL
    SELECT run_id, 'quality.review_approval_rate', approved / decided FROM review_counts WHERE decided > 0
)
SELECT run_id, metric, CAST(value AS DOUBLE) AS value,
       CASE WHEN metric = 'quality.claims' THEN '{count}' ELSE '1' END AS unit
FROM long;
