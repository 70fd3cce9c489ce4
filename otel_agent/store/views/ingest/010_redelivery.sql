-- The re-delivery rule of the tables keyed by (time, content_hash): logs and metric_points (docs/schema.md,
-- Conventions). Their writer statements (store/ingest/logs_insert_new.sql, metric_points_insert_new.sql) insert
-- what this returns; spans have their own key and statement (ingest/spans_insert_new.sql).
--
-- oa_not_stored(stored, incoming): the rows of table `incoming` (the writer's incoming_<table>) whose
-- (time, content_hash) table `stored` does not hold yet, one copy of each. The stored keys are found first, by a
-- semi join on (time, content_hash) that pushes the batch's time range into the scan of `stored` (zone maps
-- skip the row groups outside it), and materialised, so the anti join reads a few keys, not the table.
-- No parameter may share a name with a column of a raw table (over live ∪ archive DuckDB refuses the macro).
CREATE OR REPLACE MACRO oa_not_stored(stored, incoming) AS TABLE
WITH dup AS MATERIALIZED (
    SELECT s.time, s.content_hash
    FROM query_table(stored) s SEMI JOIN query_table(incoming) b USING (time, content_hash)
)
SELECT *
FROM query_table(incoming) b
WHERE NOT EXISTS (SELECT 1 FROM dup d WHERE d.time = b.time AND d.content_hash = b.content_hash)
QUALIFY row_number() OVER (PARTITION BY time, content_hash) = 1;
