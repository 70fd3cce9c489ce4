-- The runs view over the maintained rows (store/maintained.py installs it once the state has caught up with the
-- store; until then, and over shards or an archive, runs is runs_for_run(NULL), views/runs/080_runs.sql).
-- (a kept 'running' row turns 'abandoned' when read, as runs_for_run's does: 080_runs.sql)
CREATE OR REPLACE VIEW runs AS
SELECT * EXCLUDE (run_h) REPLACE (oa_run_status(status, last_activity_time) AS status) FROM run_summary;
-- and the facts the health views aggregate (views/runs/110_health.sql, 115_proxy_health.sql), the receipt views' candidate spans
-- (views/evidence/050_receipts.sql)
CREATE OR REPLACE MACRO oa_health_facts() AS TABLE SELECT * EXCLUDE (h) FROM health_facts;
CREATE OR REPLACE MACRO oa_receipt_candidates() AS TABLE SELECT * EXCLUDE (h) FROM receipt_candidates;
CREATE OR REPLACE MACRO oa_proxy_facts() AS TABLE SELECT * EXCLUDE (h) FROM proxy_facts;
-- and a run's metrics but for the quality.* rows (views/runs/090_run_metrics.sql): from its maintained row and its
-- maintained proxy_* rows
CREATE OR REPLACE MACRO oa_run_metrics_base_for_run(rid) AS TABLE
WITH r AS (SELECT * FROM run_summary WHERE rid IS NULL OR (run_h = hash(rid) AND run_id = rid))
SELECT run_id, metric, value, oa_metric_unit(metric) AS unit, labels FROM oa_run_metrics_long_in('r')
UNION ALL
SELECT run_id, metric, value, unit, labels FROM run_proxy_metrics
WHERE rid IS NULL OR (run_h = hash(rid) AND run_id = rid);
