-- Step 3b (store/maintained.py), after step_apply when the scope holds a span that may be a proxy request (the
-- filter oa_proxy_fields applies first, views/runs/065_proxy.sql: without such a span proxy_requests is empty, and
-- its pricing of every span of the scope is skipped): the scope's proxy facts.
INSERT INTO proxy_facts SELECT hash(trace_id), * FROM oa_proxy_facts_computed();

-- and the proxy_* metric rows of the scope's runs (step_apply.sql deleted their old rows), from its spans priced as
-- oa_run_metrics_base_computed prices them (no step placement: step_id NULL)
CREATE OR REPLACE TEMP TABLE _m_priced AS
WITH unplaced AS (SELECT *, CAST(NULL AS VARCHAR) AS step_id FROM _m_cls)
SELECT * FROM oa_priced_in('unplaced');

INSERT INTO run_proxy_metrics
    SELECT hash(run_id), run_id, metric, value, oa_metric_unit(metric), labels
    FROM oa_run_metrics_proxy_in('_m_priced', NULL);
