-- Retrieval documents of other conventions, read the same way everywhere (docs/views-evidence.md,
-- `retrieval_documents`): which spans may carry them, and what document n of a span is.

-- Spans of other conventions that may carry retrieval documents: GenAI spans named `retrieval` /
-- `retrieval {data source}` (ours included) and every span of an OpenInference instrumentation scope.
CREATE OR REPLACE MACRO is_retrieval_span(span_name, scope) AS
    span_name = 'retrieval' OR starts_with(span_name, 'retrieval ') OR contains(lower(scope), 'openinference');

-- The documents of a retrieval span of another convention, one document at a time: document n of a span's
-- attributes `a` is read from the first of these forms that has it:
--   1. OpenInference flattened keys `retrieval.documents.<n>.document.id|content|score|metadata`;
--   2. OpenInference `retrieval.documents` as an array of objects keyed `document.*`;
--   3. GenAI `gen_ai.retrieval.documents`: an array of objects keyed id, content (or text), score, metadata,
--      url, title, or the same array as a JSON string.
-- retrieval_documents_in (below) reads every document of a span with them; the receiver's fold does the same in
-- Python (otel_agent/fold/documents.py), and a test checks the two agree.
CREATE OR REPLACE MACRO genai_retrieval_documents(a) AS
    CASE json_type(json_extract(a, 'gen_ai.retrieval.documents'))
        WHEN 'ARRAY' THEN json_extract(a, 'gen_ai.retrieval.documents')
        WHEN 'VARCHAR' THEN
            CASE WHEN json_valid(json_extract_string(a, 'gen_ai.retrieval.documents')) THEN json_extract_string(a, 'gen_ai.retrieval.documents')::JSON END
    END;

CREATE OR REPLACE MACRO retrieval_document_indexes(a) AS
    list_sort(list_distinct(list_concat(
        list_filter(
            list_transform(json_keys(a), lambda k: TRY_CAST(regexp_extract(
                k, '^retrieval\.documents\.(\d+)\.document\.(id|content|score|metadata)$', 1) AS INTEGER)),
            lambda i: i IS NOT NULL),
        CASE WHEN json_type(json_extract(a, 'retrieval.documents')) = 'ARRAY'
             THEN range(json_array_length(json_extract(a, 'retrieval.documents'))::BIGINT)::INTEGER[] ELSE [] END,
        CASE WHEN json_type(genai_retrieval_documents(a)) = 'ARRAY'
             THEN range(json_array_length(genai_retrieval_documents(a))::BIGINT)::INTEGER[] ELSE [] END)));

-- A document's metadata: an object, or the JSON text of one.
CREATE OR REPLACE MACRO retrieval_metadata(value) AS
    CASE json_type(value)
        WHEN 'OBJECT' THEN value
        WHEN 'VARCHAR' THEN CASE WHEN json_valid(json_extract_string(value, '$'))
                                 THEN json_extract_string(value, '$')::JSON END
    END;

-- Document n of attributes `a` as found: {origin, doc: the JSON object, prefix of its field names, metadata},
-- or NULL when no form has a document n. The candidates of each form are bound once, as a lambda's parameter x:
-- written out, every use of a macro's argument repeats its whole expression, and the plan grows with it.
CREATE OR REPLACE MACRO retrieval_document_found(a, n) AS
    list_transform(
        [{'id': json_extract(a, 'retrieval.documents.' || n || '.document.id'),
          'content': json_extract(a, 'retrieval.documents.' || n || '.document.content'),
          'score': json_extract(a, 'retrieval.documents.' || n || '.document.score'),
          'metadata': json_extract(a, 'retrieval.documents.' || n || '.document.metadata'),
          'oi': json_extract(a, '$."retrieval.documents"[' || n || ']'),
          'genai': json_extract(genai_retrieval_documents(a), '$[' || n || ']')}],
        lambda x: CASE
            WHEN x.id IS NOT NULL OR x.content IS NOT NULL OR x.score IS NOT NULL OR x.metadata IS NOT NULL
                THEN {'origin': 'openinference',
                      'doc': json_object('id', x.id, 'content', x.content, 'score', x.score),
                      'prefix': '',
                      'metadata': retrieval_metadata(x.metadata)}
            WHEN json_type(x.oi) = 'OBJECT'
                THEN {'origin': 'openinference', 'doc': x.oi, 'prefix': 'document.',
                      'metadata': retrieval_metadata(json_extract(x.oi, 'document.metadata'))}
            WHEN json_type(x.genai) = 'OBJECT'
                THEN {'origin': 'gen_ai', 'doc': x.genai, 'prefix': '',
                      'metadata': retrieval_metadata(json_extract(x.genai, 'metadata'))}
        END)[1];

-- The fields of a document as found: id, content (or text), score; url and title its own or else its
-- metadata's (url: 'url', 'source' or 'file_path').
CREATE OR REPLACE MACRO retrieval_document_fields(f) AS {
    'origin': f.origin,
    'document_id': json_extract_string(f.doc, f.prefix || 'id'),
    'content': coalesce(json_extract_string(f.doc, f.prefix || 'content'), json_extract_string(f.doc, f.prefix || 'text')),
    'score': TRY_CAST(json_extract_string(f.doc, f.prefix || 'score') AS DOUBLE),
    'metadata': f.metadata,
    'url': coalesce(json_extract_string(f.doc, 'url'), json_extract_string(f.metadata, 'url'),
                    json_extract_string(f.metadata, 'source'), json_extract_string(f.metadata, 'file_path')),
    'title': coalesce(json_extract_string(f.doc, 'title'), json_extract_string(f.metadata, 'title'))
};

-- Document n of attributes `a`: {origin, document_id, content, score, metadata, url, title}, or NULL. The
-- document found is bound once (a lambda parameter), so the expression stays small to plan.
CREATE OR REPLACE MACRO retrieval_document_at(a, n) AS
    list_transform([retrieval_document_found(a, n)],
                   lambda f: CASE WHEN f IS NOT NULL THEN retrieval_document_fields(f) END)[1];

-- Who served a retrieval span's documents.
CREATE OR REPLACE MACRO retrieval_provider(a) AS
    coalesce(json_extract_string(a, 'gen_ai.data_source.id'), json_extract_string(a, 'gen_ai.provider.name'),
             json_extract_string(a, 'db.system.name'), json_extract_string(a, 'db.system'));

-- The rows of parsed_retrieval_documents for the spans in table `source` (any table or view with the columns of
-- `spans`): every document of every retrieval span, each copy of a span included.
CREATE OR REPLACE MACRO retrieval_documents_in(source) AS TABLE
WITH documents AS MATERIALIZED (
    SELECT trace_id, span_id, end_time, n, retrieval_document_at(attributes, n) AS d,
           retrieval_provider(attributes) AS provider,
           attributes->>'otel_agent.run.id' AS run_id,
           attributes->>'otel_agent.step.id' AS step_id,
           service_name
    FROM (SELECT *, unnest(retrieval_document_indexes(attributes)) AS n
          FROM query_table(source)
          WHERE is_retrieval_span(name, scope_name))
)
SELECT trace_id, span_id, end_time, n AS doc_index, d.origin, d.document_id, d.content, d.score, d.metadata, d.url,
       d.title, provider, run_id, step_id, service_name
FROM documents
WHERE d IS NOT NULL AND end_time IS NOT NULL;
