-- run_summary: the Run page's header row (console/pages/run.py): the run's rollup from runs_for_run.
SELECT * FROM runs_for_run($run_id)
