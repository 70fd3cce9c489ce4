-- Contract: reads TEMP TABLE _new_spans (statements.NEW_SPANS_TABLE), made by ingest/spans_insert_new just before.
-- Re-delivery path, when the fold found retrieval documents in the batch: the same rules in SQL, applied to the
-- spans stored now only. The documents first: their lineage_keys rows are read from them.
INSERT INTO parsed_retrieval_documents SELECT * FROM retrieval_documents_in('_new_spans');
INSERT INTO lineage_keys SELECT * FROM document_lineage_keys('_new_spans');
