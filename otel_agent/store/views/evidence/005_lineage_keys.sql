-- How lineage_keys rows are computed from spans (the table: store/schema/060_lineage_keys.sql). The receiver
-- applies lineage_keys_of to every batch of new spans in the transaction that stores them
-- (store/ingest/spans_insert_*.sql); the 2 → 3 migration applies it to every stored span.

CREATE OR REPLACE MACRO lineage_key(id) AS md5_number_upper(id);

-- The keys to look up for an id: its own, and for the id of a retrieval document (evidence
-- 'retrieval:<trace>:<span>:<n>', source 'doc:<trace>:<span>:<n>') the key of its span as well.
CREATE OR REPLACE MACRO lineage_lookup_keys(id) AS
    CASE WHEN regexp_matches(id, '^(retrieval|doc):[^:]+:[^:]+:\d+$')
         THEN [lineage_key(id), lineage_key('retrieval:' || split_part(id, ':', 2) || ':' || split_part(id, ':', 3))]
         ELSE [lineage_key(id)]
    END;

-- The lineage keys of the spans in table `source` (a table or view with the columns of `spans`): the id of each
-- claim, evidence item and source, the claim id of each citation, every claim and evidence id a conflict lists,
-- and of each retrieval span 'retrieval:<trace id>:<span id>' (its documents are the evidence items
-- 'retrieval:<trace id>:<span id>:<n>' and, without an id of their own, the sources 'doc:<trace id>:<span id>:<n>')
-- and the ids of its documents (sources).
CREATE OR REPLACE MACRO lineage_keys_of(source) AS TABLE
WITH named AS (
    SELECT CASE record_kind WHEN 'citation' THEN record_ref ELSE record_id END AS id, end_time
    FROM query_table(source)
    WHERE record_kind IN ('claim', 'citation', 'evidence_item', 'source')
    UNION ALL
    SELECT unnest(list_concat(
               coalesce(from_json(attributes->'otel_agent.conflict.claim_ids', '["VARCHAR"]'), []),
               coalesce(from_json(attributes->'otel_agent.conflict.evidence_ids', '["VARCHAR"]'), []))) AS id,
           end_time
    FROM query_table(source)
    WHERE record_kind = 'conflict'
    UNION ALL
    SELECT unnest(list_concat(
               ['retrieval:' || trace_id || ':' || span_id],
               list_transform(retrieval_document_indexes(attributes),
                              lambda n: retrieval_document_at(attributes, n).document_id))) AS id,
           end_time
    FROM query_table(source)
    WHERE is_retrieval_span(name, scope_name)
)
SELECT lineage_key(id) AS key, end_time FROM named WHERE id IS NOT NULL AND end_time IS NOT NULL;
