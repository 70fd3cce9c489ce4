-- References left pointing at spans the live store no longer holds (retention deleted them, see
-- otel_agent/lifecycle/retention.py and docs/scale.md), or never received. Retention never deletes the product's
-- own tables (reviews, trusted_writers), so a review outlives the span of the record it judged; this view lists
-- such rows instead of letting them vanish silently. Over live ∪ archive (`--archive`) the spans come back and
-- the rows disappear from here.
--   referrer_kind  review | lineage
--   referrer_id    the review's id, or the id of the record whose span points on
--   target_kind    the review's target kind, or the referring span's record kind
--   missing_id     the record id no stored span carries
CREATE OR REPLACE VIEW dangling_references AS
SELECT 'review' AS referrer_kind, r.review_id AS referrer_id, r.target_kind, r.target_id AS missing_id
FROM reviews r
WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.record_id = r.target_id)
UNION ALL
SELECT DISTINCT 'lineage', s.record_id, s.record_kind, s.record_ref
FROM spans s
WHERE s.record_kind IN ('evidence_item', 'claim', 'citation', 'artifact_version')  -- refs to another record
  AND s.record_ref IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM spans t WHERE t.record_id = s.record_ref);
