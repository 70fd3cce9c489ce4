-- Span events, stored once with their span (a re-delivered span brings no second copy).
CREATE TABLE IF NOT EXISTS span_events (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    event_index UINTEGER NOT NULL,
    time TIMESTAMP_NS,
    name VARCHAR,
    -- zstd for the payload columns: 010_spans.sql says why
    attributes JSON USING COMPRESSION zstd,
    dropped_attributes_count UINTEGER,
    ingest_seq BIGINT DEFAULT nextval('ingest_seq_gen')  -- as spans.ingest_seq
);
