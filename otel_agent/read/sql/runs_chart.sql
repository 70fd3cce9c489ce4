-- runs_chart: runs, cost and errors over time for the Runs page chart, with the page's filters (runs_filter.sql).
-- Over the runs view, or the console's snapshot of it, as runs_list.sql.
-- About 24 buckets over the filtered time span; $t0/$t1 NULL: all time.
WITH r AS MATERIALIZED (
    SELECT start_time, cost_usd, status, errors
    FROM runs_matching($status, $service, $text, $t0, $t1, $agent, $min_cost, $only_errors, $run)
),
span AS (
    SELECT min(epoch_us(start_time)) AS lo, greatest((max(epoch_us(start_time)) - min(epoch_us(start_time))) // 24, 1000000) AS w
    FROM r
)
SELECT make_timestamp(lo + ((epoch_us(start_time) - lo) // w) * w) AS bucket,
       count(*) AS runs,
       fsum(cost_usd) AS cost_usd,
       count(*) FILTER (WHERE status = 'error') AS failed_runs,
       sum(errors) AS errors
FROM r, span
GROUP BY ALL
ORDER BY bucket
