-- Key/value facts about the store itself; `schema_version` guards against opening a file of another version.
CREATE TABLE IF NOT EXISTS otel_agent_meta (
    key VARCHAR NOT NULL,
    value VARCHAR NOT NULL
);
