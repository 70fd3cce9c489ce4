-- Forget the maintained state (store/maintained.py rebuilds it from raw; the runs view, the health facts and
-- oa_scoped_spans read raw meanwhile: their query-time definitions, views/runs/080_runs.sql, 110_health.sql,
-- evidence/050_receipts.sql and 020_span_fields.sql, applied again here or by the caller).
CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL);
-- (before the drops: DuckDB binds a macro's body when it is created)
CREATE OR REPLACE MACRO oa_health_facts() AS TABLE
SELECT * EXCLUDE (span_id, event_index) FROM oa_health_facts_computed();
CREATE OR REPLACE MACRO oa_receipt_candidates() AS TABLE SELECT * FROM oa_receipt_candidates_computed();
CREATE OR REPLACE MACRO oa_proxy_facts() AS TABLE SELECT * FROM oa_proxy_facts_computed();
CREATE OR REPLACE MACRO oa_run_metrics_base_for_run(rid) AS TABLE SELECT * FROM oa_run_metrics_base_computed(rid);
DROP TABLE IF EXISTS trace_commits;
DROP TABLE IF EXISTS run_traces;
DROP TABLE IF EXISTS dirty_traces;
DROP TABLE IF EXISTS run_summary;
DROP TABLE IF EXISTS health_facts;
DROP TABLE IF EXISTS receipt_candidates;
DROP TABLE IF EXISTS proxy_facts;
DROP TABLE IF EXISTS run_proxy_metrics;
