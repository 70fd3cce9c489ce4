-- Evidence records: sources, evidence items, claims, citations, conflicts (docs/views-evidence.md).
--
-- Our instrumentation emits each record as a zero-length span classified by `otel_agent.record.kind`. A record
-- span is selected by its registry span name (a dictionary-compressed column DuckDB filters without touching
-- the JSON) and confirmed by its record kind. Each span's attributes are parsed once, with json_transform
-- into a struct (one `->>` per attribute would parse the JSON once per attribute: ~6x slower). Records refer to each other by id only, so they may come from
-- any span, step, trace or process. Every view keeps one row per record id: the earliest copy by
-- (recorded time, trace id, span id), so re-delivered or re-emitted records never count twice.
--
-- Retrieval results of other conventions are sources and evidence too: OpenInference RETRIEVER spans
-- (`retrieval.documents.N.document.id/content/score/metadata`, from an OpenInference instrumentation scope) and
-- GenAI retrieval spans (named `retrieval[ {data source}]`, `gen_ai.retrieval.documents` structured or a JSON
-- string).

-- oa_record_spans(span_name, wanted_kind, shape): our record spans of one kind, the shape every record view starts
-- from (sources, evidence items, claims, citations, conflicts; artifacts and versions in 040_artifacts.sql,
-- memory proposals 070, decisions and badcases 080, repairs 095, authorizations 100).
-- Selected by their registry span name, then confirmed by otel_agent.record.kind; `a` is the span's
-- attributes parsed once by json_transform with `shape` (a JSON structure literal, which must name
-- otel_agent.record.kind, otel_agent.run.id and otel_agent.step.id). The other columns are where the record
-- came from, the tail of every record view: a view selects its own columns from `a`, then `* EXCLUDE (a)`.
-- No parameter may share a name with a column of `spans` (`kind`, `record_kind` are columns): over live ∪
-- archive DuckDB then refuses the macro ("Conflicting column names"), hence `wanted_kind`.
CREATE OR REPLACE MACRO oa_record_spans(span_name, wanted_kind, shape) AS TABLE
SELECT a, a['otel_agent.run.id'] AS run_id, a['otel_agent.step.id'] AS step_id,
       trace_id, span_id, service_name, start_time AS recorded_at
FROM (
    SELECT json_transform(attributes, shape) AS a, trace_id, span_id, service_name, start_time
    FROM spans
    WHERE name = span_name
)
WHERE a['otel_agent.record.kind'] = wanted_kind;

-- One row per document found on a retrieval span of another convention (parsed at ingest into
-- parsed_retrieval_documents by retrieval_documents_in, 003_retrieval_documents.sql). A span delivered again
-- with another end time counts once: its earliest copy. run_id is the run the span belongs to by the rule of
-- classified_spans (its otel_agent.run.id, else its parent's, else the earliest run id of its trace, else its
-- trace id), so a run recognised from a third-party trace owns its documents.
CREATE OR REPLACE VIEW retrieval_documents AS
WITH d AS (
    SELECT *
    FROM parsed_retrieval_documents
    QUALIFY dense_rank() OVER (PARTITION BY trace_id, span_id ORDER BY end_time) = 1
),
trace_runs AS (
    SELECT trace_id, arg_min(run_id, start_time) AS trace_run_id
    FROM spans
    WHERE run_id IS NOT NULL AND trace_id IN (SELECT trace_id FROM d WHERE run_id IS NULL)
    GROUP BY trace_id
),
parent_runs AS (
    SELECT DISTINCT s.trace_id, s.span_id, p.run_id AS parent_run_id
    FROM spans AS s
    JOIN spans AS p ON p.trace_id = s.trace_id AND p.span_id = s.parent_span_id
    WHERE p.run_id IS NOT NULL
      AND (s.trace_id, s.span_id) IN (SELECT (trace_id, span_id) FROM d WHERE run_id IS NULL)
)
SELECT d.trace_id, d.span_id, d.doc_index, d.origin, d.document_id, d.content, d.score, d.metadata, d.url,
       d.title, d.provider, d.end_time::TIMESTAMP AS retrieved_at,
       coalesce(d.run_id, pr.parent_run_id, tr.trace_run_id, d.trace_id) AS run_id,
       d.step_id, d.service_name, d.end_time AS recorded_at
FROM d
LEFT JOIN (SELECT trace_id, span_id, any_value(parent_run_id) AS parent_run_id FROM parent_runs GROUP BY ALL)
    AS pr ON pr.trace_id = d.trace_id AND pr.span_id = d.span_id
LEFT JOIN trace_runs AS tr ON tr.trace_id = d.trace_id;

CREATE OR REPLACE VIEW sources AS
WITH own_rows AS (
    SELECT a['otel_agent.source.id'] AS source_id,
           a['otel_agent.source.url'] AS url,
           a['otel_agent.source.title'] AS title,
           a['otel_agent.source.provider'] AS provider,
           coalesce(timezone('UTC', TRY_CAST(a['otel_agent.source.retrieved_at'] AS TIMESTAMPTZ)),
                    recorded_at::TIMESTAMP) AS retrieved_at,
           CASE WHEN json_valid(a['otel_agent.source.metadata']) THEN a['otel_agent.source.metadata']::JSON END
               AS metadata,
           'otel_agent' AS origin,
           * EXCLUDE (a)
    FROM oa_record_spans('otel_agent.source', 'source', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.source.id": "VARCHAR",
               "otel_agent.source.url": "VARCHAR", "otel_agent.source.title": "VARCHAR",
               "otel_agent.source.provider": "VARCHAR", "otel_agent.source.retrieved_at": "VARCHAR",
               "otel_agent.source.metadata": "VARCHAR", "otel_agent.run.id": "VARCHAR",
               "otel_agent.step.id": "VARCHAR"}')
),
documents AS (
    SELECT coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index) AS source_id,
           url, title, provider, retrieved_at, metadata, origin, run_id, step_id,
           trace_id, span_id, service_name, recorded_at
    FROM retrieval_documents
)
SELECT source_id, url, title, provider, retrieved_at, metadata, origin, run_id, step_id,
       trace_id, span_id, service_name, recorded_at
FROM (SELECT * FROM own_rows UNION ALL BY NAME SELECT * FROM documents)
WHERE source_id IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recorded_at, trace_id, span_id) = 1;

CREATE OR REPLACE VIEW evidence_items AS
WITH own_rows AS (
    SELECT a['otel_agent.evidence.id'] AS evidence_id,
           a['otel_agent.evidence.source_id'] AS source_id,
           a['otel_agent.evidence.excerpt'] AS excerpt,
           a['otel_agent.evidence.confidence'] AS confidence,
           NULL::DOUBLE AS score,
           a['otel_agent.evidence.supports_step'] AS supports_step,
           CASE WHEN json_valid(a['otel_agent.evidence.metadata']) THEN a['otel_agent.evidence.metadata']::JSON END
               AS metadata,
           'otel_agent' AS origin,
           * EXCLUDE (a)
    FROM oa_record_spans('otel_agent.evidence_item', 'evidence_item', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.evidence.id": "VARCHAR",
               "otel_agent.evidence.source_id": "VARCHAR", "otel_agent.evidence.excerpt": "VARCHAR",
               "otel_agent.evidence.confidence": "VARCHAR", "otel_agent.evidence.supports_step": "VARCHAR",
               "otel_agent.evidence.metadata": "VARCHAR", "otel_agent.run.id": "VARCHAR",
               "otel_agent.step.id": "VARCHAR"}')
),
documents AS (
    SELECT 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index AS evidence_id,
           coalesce(document_id, 'doc:' || trace_id || ':' || span_id || ':' || doc_index) AS source_id,
           content AS excerpt,
           NULL::VARCHAR AS confidence,
           score,
           NULL::VARCHAR AS supports_step,
           metadata, origin, run_id, step_id, trace_id, span_id, service_name, recorded_at
    FROM retrieval_documents
),
items AS (
    SELECT * FROM (SELECT * FROM own_rows UNION ALL BY NAME SELECT * FROM documents)
    WHERE evidence_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY evidence_id ORDER BY recorded_at, trace_id, span_id) = 1
)
SELECT i.evidence_id, i.source_id, i.excerpt, i.confidence, i.score, i.supports_step, i.metadata, i.origin,
       coalesce(r.status, 'unreviewed') AS status, r.reviewed_by, r.reviewed_at, r.review_reason,
       i.run_id, i.step_id, i.trace_id, i.span_id, i.service_name, i.recorded_at
FROM items i
LEFT JOIN oa_reviews_of('evidence_item') r ON r.target_id = i.evidence_id;

CREATE OR REPLACE VIEW claims AS
SELECT a['otel_agent.claim.id'] AS claim_id,
       a['otel_agent.claim.text'] AS text,
       a['otel_agent.claim.confidence'] AS confidence,
       a['otel_agent.claim.artifact_version_id'] AS artifact_version_id,
       * EXCLUDE (a)
FROM oa_record_spans('otel_agent.claim', 'claim', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.claim.id": "VARCHAR",
               "otel_agent.claim.text": "VARCHAR", "otel_agent.claim.confidence": "VARCHAR",
               "otel_agent.claim.artifact_version_id": "VARCHAR", "otel_agent.run.id": "VARCHAR",
               "otel_agent.step.id": "VARCHAR"}')
WHERE a['otel_agent.claim.id'] IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY claim_id ORDER BY recorded_at, trace_id, span_id) = 1;

CREATE OR REPLACE VIEW citations AS
SELECT a['otel_agent.citation.id'] AS citation_id,
       a['otel_agent.citation.claim_id'] AS claim_id,
       a['otel_agent.citation.evidence_id'] AS evidence_id,
       a['otel_agent.citation.text'] AS citation_text,
       a['otel_agent.citation.status'] AS status,
       * EXCLUDE (a)
FROM oa_record_spans('otel_agent.citation', 'citation', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.citation.id": "VARCHAR",
               "otel_agent.citation.claim_id": "VARCHAR", "otel_agent.citation.evidence_id": "VARCHAR",
               "otel_agent.citation.text": "VARCHAR", "otel_agent.citation.status": "VARCHAR",
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
WHERE a['otel_agent.citation.id'] IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY citation_id ORDER BY recorded_at, trace_id, span_id) = 1;

CREATE OR REPLACE VIEW conflicts AS
WITH records AS (
    SELECT a['otel_agent.conflict.id'] AS conflict_id,
           a['otel_agent.conflict.description'] AS description,
           a['otel_agent.conflict.severity'] AS severity,
           coalesce(a['otel_agent.conflict.claim_ids'], []::VARCHAR[]) AS claim_ids,
           coalesce(a['otel_agent.conflict.evidence_ids'], []::VARCHAR[]) AS evidence_ids,
           * EXCLUDE (a)
    FROM oa_record_spans('otel_agent.conflict', 'conflict', '{
               "otel_agent.record.kind": "VARCHAR", "otel_agent.conflict.id": "VARCHAR",
               "otel_agent.conflict.description": "VARCHAR", "otel_agent.conflict.severity": "VARCHAR",
               "otel_agent.conflict.claim_ids": ["VARCHAR"], "otel_agent.conflict.evidence_ids": ["VARCHAR"],
               "otel_agent.run.id": "VARCHAR", "otel_agent.step.id": "VARCHAR"}')
    WHERE a['otel_agent.conflict.id'] IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY conflict_id ORDER BY recorded_at, trace_id, span_id) = 1
)
SELECT c.conflict_id, c.description, c.severity, c.claim_ids, c.evidence_ids,
       CASE WHEN r.status IN ('acknowledged', 'resolved') THEN r.status ELSE 'open' END AS status,
       r.decided_by AS status_by,
       r.decided_at AS status_at,
       r.decision_reason AS status_reason,
       c.run_id, c.step_id, c.trace_id, c.span_id, c.service_name, c.recorded_at
FROM records c
LEFT JOIN review_status r ON r.target_kind = 'conflict' AND r.target_id = c.conflict_id;
