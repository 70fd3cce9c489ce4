-- trace_runs: the runs a trace's spans belong to (classified_spans rules 1-4 on the promoted run_id column): the
-- run ids its spans carry, earliest first, else the trace id itself (a third-party run). At most 20.
SELECT run_id FROM (
    SELECT run_id, min(start_time) AS first_start FROM spans
    WHERE trace_id = $trace_id AND run_id IS NOT NULL GROUP BY run_id
    UNION ALL
    SELECT $trace_id, NULL WHERE NOT EXISTS (SELECT 1 FROM spans WHERE trace_id = $trace_id AND run_id IS NOT NULL)
)
ORDER BY first_start NULLS LAST
LIMIT 20
