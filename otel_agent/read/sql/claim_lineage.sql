-- claim_lineage: claim → citations → evidence items → sources of one claim (claim_lineage_of: the fast path).
SELECT * FROM claim_lineage_of($claim_id)
ORDER BY citation_id NULLS FIRST, evidence_id, source_id
LIMIT 500
