-- The maintained derived state (store/maintained.py): tables the writer keeps as data arrives, so that a public
-- view reads rows instead of deriving them from every raw span. Rebuilt from raw whenever the derived SQL or the
-- price table changes (the maintained fingerprint), so nothing here is a source of truth.
--
-- trace_commits: each group commit (ingest_seq) that stored rows of a trace (h = hash(trace_id)): where a trace's
--   rows are, so folding a trace again reads only its commits' row groups, never the whole store.
-- run_traces: which runs each folded trace holds spans of (a run may span traces: otel_agent.run.id).
-- run_summary: the rows of the runs view, one per run, as runs_for_run(NULL) computes them, with run_h.
-- dirty_traces: traces to fold again though no new row arrived for them (retention deleted some of their rows).
-- health_facts: the rows of oa_health_facts_computed() (views/runs/110_health.sql) for the folded traces, with h:
--   what provider_health, skill_health and tool_usage aggregate over a window. Without the fact's span_id and
--   event_index, which only its computation reads (to count a span or an event once): they were half of the
--   table's bytes (~25 B a span on 10 M GenAI spans) and no aggregate reads them (oa_health_facts() leaves them
--   out either way). trace_id stays: a step replaces a trace's facts by hash and id.
-- proxy_facts: the rows of oa_proxy_facts_computed() (views/runs/115_proxy_health.sql) of the folded traces, with h.
-- run_proxy_metrics: the proxy_* rows of run_metrics (oa_run_metrics_proxy_in, views/runs/090_run_metrics.sql) of
--   each run, with run_h. The cost.*, usage.*, reliability.* and latency.* rows are a function of the run's row
--   (oa_run_metrics_long_in over run_summary, computed when read: ~20 rows a run not stored), and the quality.*
--   rows depend on reviews and conflicts anywhere in the store (computed when read).
-- receipt_candidates: the rows of oa_receipt_candidates_computed() (views/evidence/050_receipts.sql) of the folded
--   traces, with h: the spans the receipt views map onto transitions.
CREATE TABLE IF NOT EXISTS trace_commits (h UBIGINT NOT NULL, seq BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS run_traces (run_h UBIGINT NOT NULL, run_id VARCHAR, h UBIGINT NOT NULL, trace_id VARCHAR);
CREATE TABLE IF NOT EXISTS dirty_traces (h UBIGINT NOT NULL, trace_id VARCHAR);
CREATE TABLE IF NOT EXISTS health_facts (
    h UBIGINT NOT NULL, kind VARCHAR, trace_id VARCHAR, t TIMESTAMP_NS,
    key1 VARCHAR, key2 VARCHAR, key3 VARCHAR, key4 VARCHAR, duration_ms DOUBLE, is_error BOOLEAN, retries BIGINT,
    input_tokens BIGINT, output_tokens BIGINT, cost_usd DOUBLE
);
CREATE TABLE IF NOT EXISTS proxy_facts (
    h UBIGINT NOT NULL, kind VARCHAR, trace_id VARCHAR, span_id VARCHAR, t TIMESTAMP_NS, client VARCHAR,
    provider VARCHAR, model VARCHAR, is_error BOOLEAN, duration_ms DOUBLE, input_tokens BIGINT, output_tokens BIGINT,
    cost_usd DOUBLE, stream BOOLEAN, stream_chunks BIGINT, from_provider VARCHAR, from_model VARCHAR,
    to_provider VARCHAR, to_model VARCHAR, status VARCHAR
);
CREATE TABLE IF NOT EXISTS receipt_candidates (
    h UBIGINT NOT NULL, trace_id VARCHAR, span_id VARCHAR, name VARCHAR, kind VARCHAR, status_code VARCHAR,
    service_name VARCHAR, principal VARCHAR, received_at TIMESTAMPTZ, start_time TIMESTAMP_NS,
    end_time TIMESTAMP_NS, attributes JSON, record_kind VARCHAR
);
CREATE TABLE IF NOT EXISTS run_summary AS SELECT hash(run_id) AS run_h, * FROM runs_for_run(NULL) LIMIT 0;
CREATE TABLE IF NOT EXISTS run_proxy_metrics AS
SELECT hash(run_id) AS run_h, * FROM oa_run_metrics_base_computed(NULL) LIMIT 0;
