-- claims_list: one page of the Evidence page (console/pages/claims.py): claims with their derived status
-- (claim_support). Parameters: $status, $text (substring of the claim text or id), $run_id, $limit, $offset.
SELECT claim_id, text, confidence, run_id, artifact_version_id, status, why, citations, valid_citations,
       supporting_evidence, rejected_evidence, missing_evidence, open_conflict_ids, review_status, reviewed_by
FROM claim_support
WHERE ($status IS NULL OR status = $status)
  AND ($run_id IS NULL OR run_id = $run_id)
  AND ($text IS NULL OR contains(lower(text), lower($text)) OR contains(lower(claim_id), lower($text)))
ORDER BY claim_id
LIMIT $limit OFFSET $offset
