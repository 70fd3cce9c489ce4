-- claims_counts: claims per derived status, for the Evidence page's filter tabs.
SELECT status, count(*) AS n FROM claim_support GROUP BY status ORDER BY status
