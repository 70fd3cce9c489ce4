-- reviews: human review verdicts, a product table (append-only, written by `otel-agent review` and the
-- ReviewService in otel_agent/server/review_service.py, never by agents' spans). Part of the versioned schema
-- (since version 4): its rows are data no view can rebuild. The views over it (review_verdicts, review_status)
-- are in views/evidence/010_reviews.sql.
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
