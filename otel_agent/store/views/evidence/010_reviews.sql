-- Human review: the effective review status of every reviewed record, and the writer trust in force, over the
-- product's append-only tables `reviews` and `trusted_writers` (in the versioned schema: store/schema/080_reviews.sql,
-- 090_trusted_writers.sql). The effective status of a record is its latest verdict (reviewed_at, review_id).

-- Writer trust for handoff receipts: the latest row per (principal, service_name) is in force.
CREATE OR REPLACE VIEW writer_trust AS
SELECT principal, service_name, trusted, changed_by, reason, changed_at
FROM trusted_writers
QUALIFY row_number() OVER (PARTITION BY principal, service_name ORDER BY changed_at DESC, change_id DESC) = 1;

-- The verdict in force on each record that has one: its latest approve/reject (for conflicts acknowledge/resolve),
-- by (reviewed_at, review_id). Annotations never change a status.
CREATE OR REPLACE VIEW review_verdicts AS
SELECT target_kind,
       target_id,
       CASE decision
           WHEN 'approve' THEN 'approved'
           WHEN 'reject' THEN 'rejected'
           WHEN 'acknowledge' THEN 'acknowledged'
           WHEN 'resolve' THEN 'resolved'
       END AS status,
       reviewer AS decided_by,
       reviewed_at AS decided_at,
       reason AS decision_reason
FROM reviews
WHERE decision IN ('approve', 'reject', 'acknowledge', 'resolve')
QUALIFY row_number() OVER (PARTITION BY target_kind, target_id ORDER BY reviewed_at DESC, review_id DESC) = 1;

-- One row per reviewed record: its verdict (review_verdicts; NULL while it has only annotations) and counts.
CREATE OR REPLACE VIEW review_status AS
WITH counts AS (
    SELECT target_kind, target_id,
           count(*) AS reviews,
           count(*) FILTER (WHERE decision = 'annotate') AS annotations,
           max(reviewed_at) AS last_reviewed_at
    FROM reviews
    GROUP BY target_kind, target_id
)
SELECT c.target_kind,
       c.target_id,
       v.status,
       v.decided_by,
       v.decided_at,
       v.decision_reason,
       c.reviews,
       c.annotations,
       c.last_reviewed_at
FROM counts c
LEFT JOIN review_verdicts v USING (target_kind, target_id);

-- oa_reviews_of(wanted_kind): the review columns every reviewed record view ends with (evidence_items,
-- claim_support, artifact_versions, memory_proposals; docs/views-evidence.md), named once: per target id of that
-- kind, its status and who decided it, when and why. A view LEFT JOINs it on its record id and maps `status`
-- to its own default (unreviewed, draft, pending, …). The parameter is not named like a column it reads.
CREATE OR REPLACE MACRO oa_reviews_of(wanted_kind) AS TABLE
SELECT target_id, status, decided_by AS reviewed_by, decided_at AS reviewed_at, decision_reason AS review_reason
FROM review_status
WHERE target_kind = wanted_kind;
