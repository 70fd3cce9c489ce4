-- The runs view and oa_scoped_spans computed from raw again (their definitions in views/runs/080_runs.sql and
-- 020_span_fields.sql), kept over the maintained state's tables: store/maintained.py installs them when a writer
-- stops before its state has caught up, so that a reader of the file with DuckDB alone reads complete runs.
CREATE OR REPLACE VIEW runs AS SELECT * FROM runs_for_run(NULL);
CREATE OR REPLACE MACRO oa_health_facts() AS TABLE
SELECT * EXCLUDE (span_id, event_index) FROM oa_health_facts_computed();
CREATE OR REPLACE MACRO oa_receipt_candidates() AS TABLE SELECT * FROM oa_receipt_candidates_computed();
CREATE OR REPLACE MACRO oa_proxy_facts() AS TABLE SELECT * FROM oa_proxy_facts_computed();
CREATE OR REPLACE MACRO oa_run_metrics_base_for_run(rid) AS TABLE SELECT * FROM oa_run_metrics_base_computed(rid);
