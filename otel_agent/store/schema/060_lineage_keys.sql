-- lineage_keys: where the spans of the evidence chain are, and what each one points at (docs/schema.md,
-- "Lineage keys").
--
-- An index, not data: every row is computed from one span and written in the transaction that stores the span
-- (otel_agent/ingest/writer.py), so it says nothing the spans do not. The rule: lineage_keys_of in
-- views/evidence/005_lineage_keys.sql; the fold applies the same rule to our records (otel_agent/fold/lineage.py).
-- It exists because DuckDB has nothing else that finds a few rows among millions quickly. One scan of a string
-- column of 1 M spans costs ~5 ms on 2 cores, and the lineage of one claim follows three ids that depend on each
-- other (claim → citations → evidence → sources). This table holds one narrow row per id a lineage record carries,
-- keyed by a 64-bit integer:
--   key       the id's key, lineage_key(id) (the first 8 bytes of its MD5);
--   end_time  the end time of the span that carries it;
--   next_key  the key of the id that span leads on to: a citation → the evidence it cites, an evidence item or
--             a retrieval document → its source; NULL for the others;
--   kind      the record kind of that span, or 'retrieval' for a document of another convention's retrieval
--             span (those are read from parsed_retrieval_documents, not from spans).
-- claim_lineage_of follows keys here (three lookups), then reads `spans` once, filtered on the end times found:
-- spans arrive in end-time order, so zone maps skip every row group but those few. It re-checks every id on the
-- spans themselves; a key never decides alone.
--
-- No index (issue 16; docs/scale.md, "The lineage_keys index is gone"). A lookup scans the one UBIGINT column: ~2 ms
-- per lookup at 2 M keys (the 10 M-span soak), ~15 ms at 10 M, against ~1 ms with an ART. The ART it had cost
-- the writer on every commit (which merges the transaction's keys into it) and every checkpoint (which writes
-- it out whole), growing with the index: with DuckDB alone, COMMIT 4.3 → 9.5 ms and CHECKPOINT 55 → 152 ms from
-- 1 M to 6 M keys, flat without it; on the soak the lineage mix fell to 0.76x of its first million's rate.
-- Ingest is the hot path and a lineage lookup an interactive one, so the lookup pays. Stores made before lose
-- the index when next opened for writing (the DROP below; a no-op on new ones).
CREATE TABLE IF NOT EXISTS lineage_keys (
    key UBIGINT NOT NULL,
    end_time TIMESTAMP_NS NOT NULL,
    next_key UBIGINT,
    kind VARCHAR NOT NULL
);

DROP INDEX IF EXISTS lineage_keys_key;
