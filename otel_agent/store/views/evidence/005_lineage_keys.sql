-- How lineage_keys rows are computed (the table and what it is for: store/schema/060_lineage_keys.sql).
--
-- Rows of our evidence records are computed by the receiver's fold (otel_agent/fold/lineage.py: SQL planning
-- on the writer's one thread cost too much per commit); record_lineage_keys below is the same rule in SQL, used
-- to fill old stores, on the re-delivery path, and by a test that checks both agree. Rows of retrieval documents
-- come from parsed_retrieval_documents (document_lineage_keys), written in the same transaction.

CREATE OR REPLACE MACRO lineage_key(id) AS md5_number_upper(id);

-- The rows of the record spans in table `source` (any table or view with the columns of `spans`):
--   claim, source   its id;
--   citation        the claim id it names, leading on to the evidence id it cites;
--   evidence item   its id, leading on to its source id;
--   conflict        every claim and evidence id it lists.
CREATE OR REPLACE MACRO record_lineage_keys(source) AS TABLE
WITH rows AS (
    SELECT record_id AS id, end_time, NULL::VARCHAR AS next_id, record_kind AS kind
    FROM query_table(source)
    WHERE record_kind IN ('claim', 'source')
    UNION ALL
    SELECT record_ref, end_time, attributes->>'otel_agent.citation.evidence_id', record_kind
    FROM query_table(source)
    WHERE record_kind = 'citation'
    UNION ALL
    SELECT record_id, end_time, record_ref, record_kind
    FROM query_table(source)
    WHERE record_kind = 'evidence_item'
    UNION ALL
    SELECT unnest(list_concat(
               coalesce(from_json(attributes->'otel_agent.conflict.claim_ids', '["VARCHAR"]'), []),
               coalesce(from_json(attributes->'otel_agent.conflict.evidence_ids', '["VARCHAR"]'), []))),
           end_time, NULL, record_kind
    FROM query_table(source)
    WHERE record_kind = 'conflict'
)
SELECT lineage_key(id) AS key, end_time, lineage_key(next_id) AS next_key, kind
FROM rows
WHERE id IS NOT NULL AND end_time IS NOT NULL;

-- The rows of the documents (parsed_retrieval_documents) of the spans in table `source`: for document n of a
-- span, its evidence id 'retrieval:<trace>:<span>:<n>', leading on to its source id, and that source id (the
-- document's id, or 'doc:<trace>:<span>:<n>' when it has none).
CREATE OR REPLACE MACRO document_lineage_keys(source) AS TABLE
WITH documents AS (
    SELECT 'retrieval:' || d.trace_id || ':' || d.span_id || ':' || d.doc_index AS evidence_id,
           coalesce(d.document_id, 'doc:' || d.trace_id || ':' || d.span_id || ':' || d.doc_index) AS source_id,
           d.end_time
    FROM parsed_retrieval_documents d
    SEMI JOIN query_table(source) s USING (trace_id, span_id, end_time)
)
SELECT lineage_key(evidence_id) AS key, end_time, lineage_key(source_id) AS next_key, 'retrieval' AS kind
FROM documents
UNION ALL
SELECT lineage_key(source_id), end_time, NULL, 'retrieval' FROM documents;

-- Every row of the spans in `source`, as the receiver writes them (documents parsed first).
CREATE OR REPLACE MACRO lineage_keys_of(source) AS TABLE
SELECT * FROM record_lineage_keys(source)
UNION ALL
SELECT * FROM document_lineage_keys(source);
