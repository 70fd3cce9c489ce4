-- Fast path: no span of the batch is stored yet and none repeats, so every row goes in as it is.
INSERT INTO spans BY NAME SELECT * FROM incoming_spans;
INSERT INTO span_events BY NAME SELECT * FROM incoming_span_events;
INSERT INTO span_links BY NAME SELECT * FROM incoming_span_links;
-- where lineage lookups find these spans (store/schema/060_lineage_keys.sql)
INSERT INTO lineage_keys SELECT * FROM lineage_keys_of('incoming_spans');
-- the documents of retrieval spans, parsed once (store/schema/070_retrieval_documents.sql)
INSERT INTO parsed_retrieval_documents SELECT * FROM retrieval_documents_in('incoming_spans');
