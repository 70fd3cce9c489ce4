-- One row per span, every field OTLP carries. Ids are lowercase hex. Attribute columns are JSON objects:
-- attributes->>'gen_ai.request.model', (attributes->>'gen_ai.usage.input_tokens')::BIGINT.
-- Re-delivery is absorbed at insert time (key: end_time, trace_id, span_id); no index is kept because a
-- primary key does not scale (REFERENCE §5).
CREATE TABLE IF NOT EXISTS spans (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    parent_span_id VARCHAR,
    trace_state VARCHAR,
    flags UINTEGER,
    name VARCHAR,
    kind VARCHAR,
    start_time TIMESTAMP_NS,
    end_time TIMESTAMP_NS,
    duration_ns BIGINT,
    status_code VARCHAR,
    status_message VARCHAR,
    attributes JSON,
    dropped_attributes_count UINTEGER,
    dropped_events_count UINTEGER,
    dropped_links_count UINTEGER,
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
    principal VARCHAR,
    received_at TIMESTAMPTZ,
    -- attributes promoted to typed columns at fold time (otel_agent/fold/promoted.py): each equals
    -- attributes->>key of its key, so views can find a run's spans or a record by id without the JSON
    run_id VARCHAR,
    record_kind VARCHAR,
    record_id VARCHAR,
    record_ref VARCHAR
);
