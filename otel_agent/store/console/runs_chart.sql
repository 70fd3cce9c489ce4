-- runs_chart: runs, cost and errors over time for the Runs page chart, with the page's filters (see runs_list).
-- Runs over the console's snapshot of the runs view (runs_snapshot.sql), not the view itself.
-- About 24 buckets over the filtered time span; $t0/$t1 NULL: all time.
WITH r AS MATERIALIZED (
    SELECT start_time, cost_usd, status, errors
    FROM runs
    WHERE ($status IS NULL OR status = $status)
      AND ($service IS NULL OR service_name = $service)
      AND ($text IS NULL OR contains(lower(run_id), lower($text)) OR contains(lower(coalesce(workflow_name, '')), lower($text))
           OR contains(lower(coalesce(agent_name, '')), lower($text)))
      AND ($t0 IS NULL OR start_time >= $t0::TIMESTAMP)
      AND ($t1 IS NULL OR start_time < $t1::TIMESTAMP)
),
span AS (
    SELECT min(epoch_us(start_time)) AS lo, greatest((max(epoch_us(start_time)) - min(epoch_us(start_time))) // 24, 1000000) AS w
    FROM r
)
SELECT make_timestamp(lo + ((epoch_us(start_time) - lo) // w) * w) AS bucket,
       count(*) AS runs,
       sum(cost_usd) AS cost_usd,
       count(*) FILTER (WHERE status = 'error') AS failed_runs,
       sum(errors) AS errors
FROM r, span
GROUP BY ALL
ORDER BY bucket
