-- runs_filter: the runs search's filter (read/runs.py), one macro both of its queries read (runs_list.sql,
-- runs_chart.sql): runs_matching(want_status, want_service, want_text, t0, t1, want_agent, min_cost, only_errors,
-- want_run) is every run of `runs` with that status, that service, that agent, the text in its run id, workflow or
-- agent name (case-insensitive), started in [t0, t1), costing at least min_cost (known cost), with an error when
-- only_errors, whose run id is want_run (exactly: the console's live run page asks for its own row); a NULL
-- argument does not filter. A TEMP macro of the reading cursor (the store's runs view, when it reads the
-- maintained rows), or of the console's private snapshot database after each copy (console/store.py Snapshot);
-- never in a store. Over a receiver's query API (no TEMP macros) read/runs.py inlines its body.
-- A parameter is never named like a column of `runs`.
CREATE OR REPLACE TEMP MACRO runs_matching(
    want_status, want_service, want_text, t0, t1, want_agent, min_cost, only_errors, want_run
) AS TABLE
SELECT *
FROM runs
WHERE (want_status IS NULL OR status = want_status)
  AND (want_service IS NULL OR service_name = want_service)
  AND (want_agent IS NULL OR agent_name = want_agent)
  AND (want_text IS NULL OR contains(lower(run_id), lower(want_text))
       OR contains(lower(coalesce(workflow_name, '')), lower(want_text))
       OR contains(lower(coalesce(agent_name, '')), lower(want_text)))
  AND (t0 IS NULL OR start_time >= t0::TIMESTAMP)
  AND (t1 IS NULL OR start_time < t1::TIMESTAMP)
  AND (min_cost IS NULL OR cost_usd >= min_cost::DOUBLE)
  AND (only_errors IS NULL OR NOT only_errors OR errors > 0 OR status = 'error')
  AND (want_run IS NULL OR run_id = want_run);
