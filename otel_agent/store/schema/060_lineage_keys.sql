-- lineage_keys: where the spans of the evidence chain are, and what each one points at (docs/schema.md,
-- "Lineage keys").
--
-- An index, not data: every row is computed from one span and written in the transaction that stores the span
-- (otel_agent/ingest/writer.py), so it says nothing the spans do not. The rule: lineage_keys_of in
-- views/evidence/005_lineage_keys.sql; the fold applies the same rule to our records (otel_agent/fold/lineage.py).
-- It exists because DuckDB has nothing else that finds a few rows among millions quickly. One scan of a string
-- column of 1 M spans costs ~5 ms on 2 cores, and the lineage of one claim follows three ids that depend on each
-- other (claim → citations → evidence → sources). An ART index on `spans` itself would grow the file by ~160
-- bytes per span. This table holds one narrow row per id a lineage record carries, indexed by a 64-bit key:
--   key       the id's key, lineage_key(id) (the first 8 bytes of its MD5);
--   end_time  the end time of the span that carries it;
--   next_key  the key of the id that span leads on to: a citation → the evidence it cites, an evidence item or
--             a retrieval document → its source; NULL for the others;
--   kind      the record kind of that span, or 'retrieval' for a document of another convention's retrieval
--             span (those are read from parsed_retrieval_documents, not from spans).
-- claim_lineage_of follows keys here (three index lookups), then reads `spans` once, filtered on the end times
-- found: spans arrive in end-time order, so zone maps skip every row group but those few. It re-checks every
-- id on the spans themselves; a key never decides alone.
CREATE TABLE IF NOT EXISTS lineage_keys (
    key UBIGINT NOT NULL,
    end_time TIMESTAMP_NS NOT NULL,
    next_key UBIGINT,
    kind VARCHAR NOT NULL
);

CREATE INDEX IF NOT EXISTS lineage_keys_key ON lineage_keys (key);
