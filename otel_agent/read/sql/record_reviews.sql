-- record_reviews: the review history of a set of records ($ids, any kind), newest first, with the copy of the
-- record as its view showed it just before each review (target_snapshot: the preserved original).
SELECT review_id, target_kind, target_id, decision, reviewer, reason, reviewed_at, principal,
       target_snapshot::VARCHAR AS target_snapshot
FROM reviews
WHERE target_id IN (SELECT unnest($ids::VARCHAR[]))
ORDER BY reviewed_at DESC, review_id DESC
LIMIT 200
