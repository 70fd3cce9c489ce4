-- trace_raw_spans: the stored spans of one trace (latest copy each), in start order, at most $limit: the Trace
-- page shows any span the run classification did not place (category 'other').
SELECT trace_id, span_id, parent_span_id, name AS span_name, 'other' AS category, record_kind, record_id,
       epoch_ns(start_time) AS start_ns, epoch_ns(end_time) AS end_ns, duration_ns / 1e6 AS duration_ms,
       status_code, status_code = 'ERROR' AS is_error, service_name, run_id
FROM spans
WHERE trace_id = $trace_id
  -- a pending span stands for its span in progress, which the run classification places (docs/views-runs.md)
  AND NOT oa_is_pending(attributes)
QUALIFY row_number() OVER (PARTITION BY span_id ORDER BY end_time DESC, received_at DESC) = 1
ORDER BY start_time, end_time DESC, span_id
LIMIT $limit
