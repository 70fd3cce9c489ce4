-- Human review: the product's own append-only tables (written by `otel-agent review` / the ReviewService,
-- never by agents' spans), and the effective review status of every reviewed record.
--
-- Rows are only ever inserted: nothing in otel_agent updates or deletes them, and the read-only query API
-- refuses every write. The effective status of a record is its latest verdict (reviewed_at, review_id).

CREATE TABLE IF NOT EXISTS reviews (
    review_id VARCHAR NOT NULL,        -- rev_<time-ordered hex>
    target_kind VARCHAR NOT NULL,      -- evidence_item | claim | artifact_version | memory_proposal | conflict
    target_id VARCHAR NOT NULL,        -- the record's id
    decision VARCHAR NOT NULL,         -- approve | reject | annotate (conflicts: acknowledge | resolve | annotate)
    reviewer VARCHAR NOT NULL,         -- who decided (--reviewer)
    reason VARCHAR,                    -- why (or the annotation)
    reviewed_at TIMESTAMPTZ NOT NULL,  -- when the review was written
    principal VARCHAR,                 -- authenticated principal that wrote it through the receiver (NULL: direct/no auth)
    target_snapshot JSON               -- the reviewed record as it was, from its view, before this review
);

-- Writer trust for handoff receipts: which services an authenticated principal may speak for. Append-only;
-- the latest row per (principal, service_name) is in force. service_name '*' = any service.
CREATE TABLE IF NOT EXISTS trusted_writers (
    change_id VARCHAR NOT NULL,
    principal VARCHAR NOT NULL,
    service_name VARCHAR NOT NULL,
    trusted BOOLEAN NOT NULL,          -- true: grant, false: revoke
    changed_by VARCHAR NOT NULL,
    reason VARCHAR,
    changed_at TIMESTAMPTZ NOT NULL
);

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
