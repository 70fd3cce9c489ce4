-- Fast path, when the fold found retrieval documents of other conventions in the batch: the rows it read
-- (otel_agent/fold/documents.py).
INSERT INTO parsed_retrieval_documents BY NAME SELECT * FROM incoming_parsed_retrieval_documents;
