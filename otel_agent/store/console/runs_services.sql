-- runs_services: the services that ran runs, for the Runs page's filter (cheap: the run spans' service names).
SELECT DISTINCT service_name FROM spans WHERE record_kind = 'flow_run' AND service_name IS NOT NULL
ORDER BY service_name LIMIT 200
