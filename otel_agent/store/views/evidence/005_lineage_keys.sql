-- How lineage_keys rows are computed from spans (the table and what it is for: store/schema/060_lineage_keys.sql).
-- The receiver applies lineage_keys_of to every batch of new spans, in the transaction that stores them
-- (store/ingest/spans_insert_*.sql); the 2 → 3 migration applies it to every stored span.

CREATE OR REPLACE MACRO lineage_key(id) AS md5_number_upper(id);

-- The rows of the spans in table `source` (any table or view with the columns of `spans`), by what they carry:
--   claim           its id;
--   citation        the claim id it names, leading on to the evidence id it cites;
--   evidence item   its id, leading on to its source id;
--   source          its id;
--   conflict        every claim and evidence id it lists;
--   retrieval span  (is_retrieval_span) for each document n: the evidence id 'retrieval:<trace>:<span>:<n>',
--                   leading on to the document's source id, and that source id (the document's id, or
--                   'doc:<trace>:<span>:<n>' when it has none).
CREATE OR REPLACE MACRO lineage_keys_of(source) AS TABLE
WITH rows AS (
    SELECT record_id AS id, end_time, NULL::VARCHAR AS next_id
    FROM query_table(source)
    WHERE record_kind IN ('claim', 'source')
    UNION ALL
    SELECT record_ref, end_time, attributes->>'otel_agent.citation.evidence_id'
    FROM query_table(source)
    WHERE record_kind = 'citation'
    UNION ALL
    SELECT record_id, end_time, record_ref
    FROM query_table(source)
    WHERE record_kind = 'evidence_item'
    UNION ALL
    SELECT unnest(list_concat(
               coalesce(from_json(attributes->'otel_agent.conflict.claim_ids', '["VARCHAR"]'), []),
               coalesce(from_json(attributes->'otel_agent.conflict.evidence_ids', '["VARCHAR"]'), []))),
           end_time, NULL
    FROM query_table(source)
    WHERE record_kind = 'conflict'
),
document_ids AS (
    SELECT 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index AS evidence_id,
           coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index) AS source_id,
           end_time
    FROM retrieval_documents_in(source)
)
SELECT lineage_key(id) AS key, end_time, lineage_key(next_id) AS next_key
FROM (SELECT * FROM rows
      UNION ALL SELECT evidence_id, end_time, source_id FROM document_ids
      UNION ALL SELECT source_id, end_time, NULL FROM document_ids)
WHERE id IS NOT NULL AND end_time IS NOT NULL;
