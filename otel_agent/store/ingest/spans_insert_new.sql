-- Contract: creates TEMP TABLE _new_spans (statements.NEW_SPANS_TABLE), read next in the same commit by
-- ingest/lineage_keys_insert_new and ingest/documents_insert_new.
-- Re-delivery path: insert only spans not stored yet (one copy of each), and events and links only with
-- the spans inserted now, so a re-sent span brings no second copy of anything.
CREATE OR REPLACE TEMP TABLE _dup_spans AS
    SELECT s.end_time, s.trace_id, s.span_id
    FROM spans s SEMI JOIN incoming_spans b USING (end_time, trace_id, span_id);

CREATE OR REPLACE TEMP TABLE _new_spans AS
    SELECT * FROM incoming_spans b
    WHERE NOT EXISTS (
        SELECT 1 FROM _dup_spans d
        WHERE d.end_time = b.end_time AND d.trace_id = b.trace_id AND d.span_id = b.span_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, end_time) = 1;

INSERT INTO spans BY NAME SELECT * FROM _new_spans;

INSERT INTO span_events BY NAME
    SELECT * FROM incoming_span_events e SEMI JOIN _new_spans n USING (trace_id, span_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, event_index) = 1;

INSERT INTO span_links BY NAME
    SELECT * FROM incoming_span_links l SEMI JOIN _new_spans n USING (trace_id, span_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id, span_id, link_index) = 1;
