-- trusted_writers: writer trust for handoff receipts, a product table (append-only, written by `otel-agent trust`
-- and the ReviewService): which services an authenticated principal may speak for. Part of the versioned schema
-- (since version 4). The latest row per (principal, service_name) is in force (view writer_trust in
-- views/evidence/010_reviews.sql). service_name '*' = any service.
CREATE TABLE IF NOT EXISTS trusted_writers (
    change_id VARCHAR NOT NULL,
    principal VARCHAR NOT NULL,
    service_name VARCHAR NOT NULL,
    trusted BOOLEAN NOT NULL,          -- true: grant, false: revoke
    changed_by VARCHAR NOT NULL,
    reason VARCHAR,
    changed_at TIMESTAMPTZ NOT NULL
);
