-- One row per log record. `body` is the AnyValue as JSON (a string body is a JSON string).
-- Re-delivery key: (time, content_hash); content_hash is an MD5 over the record, its resource and scope.
CREATE TABLE IF NOT EXISTS logs (
    time TIMESTAMP_NS,
    observed_time TIMESTAMP_NS,
    trace_id VARCHAR,
    span_id VARCHAR,
    flags UINTEGER,
    severity_number INTEGER,
    severity_text VARCHAR,
    event_name VARCHAR,
    -- zstd for the payload columns: 010_spans.sql says why
    body JSON USING COMPRESSION zstd,
    attributes JSON USING COMPRESSION zstd,
    dropped_attributes_count UINTEGER,
    service_name VARCHAR,
    resource_attributes JSON,
    resource_dropped_attributes_count UINTEGER,
    resource_entity_refs JSON,
    resource_schema_url VARCHAR,
    scope_name VARCHAR,
    scope_version VARCHAR,
    scope_attributes JSON,
    scope_dropped_attributes_count UINTEGER,
    scope_schema_url VARCHAR,
    content_hash VARCHAR NOT NULL,
    principal VARCHAR,
    received_at TIMESTAMPTZ,
    ingest_seq BIGINT DEFAULT nextval('ingest_seq_gen')  -- as spans.ingest_seq
);
