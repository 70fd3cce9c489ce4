-- run_metrics (docs/views-runs.md): the run's cost.*, usage.*, reliability.*, latency.* and proxy_* rows
-- (oa_run_metrics_base_for_run, views/runs/090_run_metrics.sql) and seed 000's quality.* family
-- (quality_metrics_for_run, 097_quality.sql), in one long form (run_id, metric, value, unit, labels). Here, after the
-- evidence views the quality rows read (a macro's body is bound when it is created).

CREATE OR REPLACE MACRO run_metrics_for_run(rid) AS TABLE
SELECT run_id, metric, value, unit, labels FROM oa_run_metrics_base_for_run(rid)
UNION ALL
SELECT run_id, metric, value, unit, CAST(NULL AS VARCHAR) AS labels FROM quality_metrics_for_run(rid);

CREATE OR REPLACE VIEW run_metrics AS SELECT * FROM run_metrics_for_run(NULL);
