-- parsed_retrieval_documents: the documents on retrieval spans of other conventions (OpenInference, GenAI), one
-- row per document of each stored span, read by retrieval_documents_in (views/evidence/003_retrieval_documents.sql)
-- in the transaction that stores the span (store/ingest/documents_insert.sql). Like the promoted span columns, a
-- copy of what the span's JSON already says, taken once: reading the three document forms out of the JSON costs
-- more to plan than all the rest of a one-claim lineage lookup (~5 of ~18 ms, bench/derive_evidence.py), and
-- every query of sources and evidence used to parse every retrieval span again. The `retrieval_documents` view
-- reads it (one copy per span); docs/schema.md.
CREATE TABLE IF NOT EXISTS parsed_retrieval_documents (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    end_time TIMESTAMP_NS NOT NULL,   -- the span's end time: its copy (re-delivery key with trace and span id)
    doc_index INTEGER NOT NULL,       -- position of the document in the result
    origin VARCHAR,                   -- openinference | gen_ai
    document_id VARCHAR,
    content VARCHAR,
    score DOUBLE,
    metadata JSON,
    url VARCHAR,
    title VARCHAR,
    provider VARCHAR,                 -- who served the span's documents (retrieval_provider)
    run_id VARCHAR,
    step_id VARCHAR,
    service_name VARCHAR
);
