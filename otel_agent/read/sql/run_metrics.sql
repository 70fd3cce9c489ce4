-- run_metrics: the derived metrics of one run (run_metrics_for_run), for the Run page.
SELECT metric, value, unit FROM run_metrics_for_run($run_id) ORDER BY metric
