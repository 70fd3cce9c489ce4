-- Contract: reads TEMP TABLE _new_spans (statements.NEW_SPANS_TABLE), made by ingest/spans_insert_new just before.
-- Re-delivery path, when the fold found evidence records in the batch: the same rule in SQL
-- (record_lineage_keys), applied to the spans stored now only (the fold's rows cannot tell which copy of a span
-- is the one stored).
INSERT INTO lineage_keys SELECT * FROM record_lineage_keys('_new_spans');
