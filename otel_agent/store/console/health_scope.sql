-- health_scope: bound the Observability page's health macros (provider_health_between, skill_health_between,
-- tool_usage_between) to the spans that can matter in [getvariable('console_t0'), getvariable('console_t1'))
-- before they are parsed. Those macros normalise every stored span (oa_normalised_all(NULL)) and filter on
-- the window afterwards, which over all time on a large store runs into the page's query limit; this
-- temporary macro, of the same name as the views' oa_scoped_spans, is found first (DuckDB looks in the temp
-- catalog first) and hands them only the stored rows that had not ended before t0 (or started at or after
-- it) — every span started from t0 on, and every span it can be nested in (a parent is still running when
-- its child starts). No upper bound: a re-delivered span's versions may start on either side of t1, and the
-- views pick the version first, then apply their window. The views then apply their own window as before:
-- same rows, far fewer spans parsed when t0 is recent (the default: the last 24 hours).
-- Only the all-spans form (rid NULL) is served; the cursor runs nothing else and goes with the page job.
CREATE TEMP MACRO oa_scoped_spans(rid) AS TABLE
SELECT *
FROM spans
WHERE rid IS NULL
  AND (getvariable('console_t0') IS NULL
       OR end_time >= CAST(getvariable('console_t0') AS TIMESTAMP_NS)
       OR start_time >= CAST(getvariable('console_t0') AS TIMESTAMP_NS));
