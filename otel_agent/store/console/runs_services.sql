-- runs_services: the services that ran runs, for the Runs page's filter (over the runs snapshot).
SELECT DISTINCT service_name FROM runs WHERE service_name IS NOT NULL ORDER BY service_name LIMIT 200
