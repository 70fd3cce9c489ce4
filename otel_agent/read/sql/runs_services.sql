-- runs_services: the services that ran runs, for the Runs page's filter (over the runs view or its snapshot, as runs_list.sql).
SELECT DISTINCT service_name FROM runs WHERE service_name IS NOT NULL ORDER BY service_name LIMIT 200
