-- run_timeline: the business timeline of one run (run_timeline_for_run), at most 200 events.
SELECT seq, time, event, subject, detail, step_id, trace_id, span_id FROM run_timeline_for_run($run_id)
ORDER BY seq LIMIT 200
