-- oa_scoped_spans(rid) of a store with the maintained state (store/maintained.py installs it with the runs view;
-- views/runs/020_span_fields.sql has the query-time definition, which shards and live ∪ archive read): the raw
-- spans of every trace that holds spans of run rid, found without scanning the store. The traces are the ones
-- the state lists for the run (run_traces) and, among rows it has not folded yet (past maintained_seq), those
-- with the run's id or named by it; their rows are read through the commits that stored them (trace_commits)
-- and the commits past the watermark, which zone maps on ingest_seq prune. Every view over one run filters its
-- classified rows by run id, and every span classified into run rid lies in such a trace (a span's run is its
-- own otel_agent.run.id, its parent's, its trace's, or its trace id: 030_classified.sql), so per-run views read
-- the same rows as with the query-time definition. rid NULL: all spans.
CREATE OR REPLACE MACRO oa_scoped_spans(rid) AS TABLE
WITH w AS (
    SELECT coalesce(max(TRY_CAST(value AS BIGINT)), 0) AS seq FROM otel_agent_meta WHERE key = 'maintained_seq'
),
t AS MATERIALIZED (
    SELECT trace_id FROM run_traces WHERE rid IS NOT NULL AND run_h = hash(rid) AND run_id = rid
    UNION
    SELECT trace_id FROM spans
    WHERE rid IS NOT NULL AND ingest_seq > (SELECT seq FROM w) AND (trace_id = rid OR run_id = rid)
),
s AS MATERIALIZED (
    SELECT DISTINCT seq FROM trace_commits WHERE h IN (SELECT hash(trace_id) FROM t)
)
SELECT * FROM spans WHERE rid IS NULL
UNION ALL
SELECT * FROM spans
WHERE rid IS NOT NULL AND ingest_seq IN (SELECT seq FROM s) AND trace_id IN (SELECT trace_id FROM t)
UNION ALL
SELECT * FROM spans
WHERE rid IS NOT NULL AND ingest_seq > (SELECT seq FROM w) AND trace_id IN (SELECT trace_id FROM t);
