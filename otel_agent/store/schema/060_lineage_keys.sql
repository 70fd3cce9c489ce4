-- lineage_keys: where the spans that name an id of the evidence chain are (docs/schema.md, "Lineage keys").
--
-- An index, not data: every row is computed from one span by lineage_keys_of below, in the transaction that
-- stores the span (store/ingest/spans_insert_*.sql), so it holds exactly the spans' information again. It exists
-- because DuckDB has nothing else that finds a few rows among millions quickly: a scan of one string column of
-- 1 M spans costs ~5 ms on 2 cores, and the lineage of one claim needs three lookups that depend on each other
-- (claim → citations → evidence → sources). An ART index on `spans` itself would grow the file by ~160 bytes
-- per span and is rewritten at checkpoints (REFERENCE §5); this table holds one narrow row per lineage record,
-- indexed by a 64-bit key. A lookup takes the key's end times, and the scan of `spans` filtered on those end
-- times reads only the row groups that hold them (spans arrive in end-time order, so zone maps prune the rest),
-- then re-checks the id itself: keys may collide, rows are never trusted alone.
-- Measured in bench/derive_evidence.py: claim_lineage_of over 1 M spans 57–74 ms → see docs/views-evidence.md.
CREATE TABLE IF NOT EXISTS lineage_keys (
    key UBIGINT NOT NULL,             -- lineage_key(id): the first 8 bytes of the id's MD5, as DuckDB's md5_number_upper
    end_time TIMESTAMP_NS NOT NULL    -- end time of the span that names the id
);

CREATE INDEX IF NOT EXISTS lineage_keys_key ON lineage_keys (key);
