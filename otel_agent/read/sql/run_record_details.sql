-- run_record_details: the details of a run's evidence items (confidence, excerpt) and claims (support status,
-- text) that a tree prints under their step (docs/views-evidence.md).
SELECT 'evidence_item' AS kind, evidence_id AS id, confidence AS label, excerpt AS text
FROM evidence_items WHERE run_id = $run_id
UNION ALL
SELECT 'claim', claim_id, status, text FROM claim_support WHERE run_id = $run_id
