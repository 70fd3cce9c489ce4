-- One row per span, every field OTLP carries. Ids are lowercase hex. Attribute columns are JSON objects:
-- attributes->>'gen_ai.request.model', (attributes->>'gen_ai.usage.input_tokens')::BIGINT.
-- Re-delivery is absorbed at insert time (key: end_time, trace_id, span_id); no index is kept because a
-- primary key does not scale (REFERENCE §5).
-- `attributes` is compressed with zstd (as are the payload columns of span_events and logs): DuckDB's automatic
-- choice for it, dictionary + FSST, made the store 180 bytes per span and its checkpoints 93 ms per 41 k spans on
-- bench/agent_spans.py's spans; zstd makes them 80 bytes and 55 ms, for ~10 % more CPU in a scan that reads the
-- column (docs/scale.md, "2026-12-05 (II)"). The other JSON columns repeat from span to span, and dictionary
-- compression suits them better. DuckDB writes zstd only in storage versions from v1.2.0 (the default for new
-- files from DuckDB 2.0); an older file keeps the table it was created with.
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
    attributes JSON USING COMPRESSION zstd,
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
    record_ref VARCHAR,
    -- the group commit that stored the row (ingest_seq.sql): what the maintained derived state has folded in
    ingest_seq BIGINT DEFAULT nextval('ingest_seq_gen')
);
