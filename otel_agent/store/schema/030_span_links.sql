-- Span links (causality across traces: handoffs, batches), stored once with their span.
CREATE TABLE IF NOT EXISTS span_links (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    link_index UINTEGER NOT NULL,
    linked_trace_id VARCHAR NOT NULL,
    linked_span_id VARCHAR NOT NULL,
    trace_state VARCHAR,
    flags UINTEGER,
    attributes JSON,
    dropped_attributes_count UINTEGER
);
