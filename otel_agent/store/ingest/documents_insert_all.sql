-- Fast path, when the fold found retrieval documents of other conventions in the batch: the rows it read
-- (otel_agent/fold/documents.py). Metadata the fold took for JSON but DuckDB does not is dropped here rather
-- than failing the commit (the SQL rule, retrieval_metadata, drops it too).
INSERT INTO parsed_retrieval_documents BY NAME
SELECT * REPLACE (CASE WHEN json_valid(metadata) THEN metadata END AS metadata)
FROM incoming_parsed_retrieval_documents;
