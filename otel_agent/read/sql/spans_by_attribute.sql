-- spans_by_attribute: spans whose attribute $key has the text value $value ($value NULL: that carry $key), newest
-- first, the latest copy of each span, at most $limit (read/spans.py find_spans). `spans` (docs/schema.md).
SELECT trace_id, span_id, parent_span_id, name AS span_name, service_name, run_id, start_time,
       duration_ns / 1e6 AS duration_ms, status_code, json_extract_string(attributes, [$key])[1] AS value
FROM spans
WHERE json_exists(attributes, [$key])[1]
  AND ($value::VARCHAR IS NULL OR json_extract_string(attributes, [$key])[1] = $value::VARCHAR)
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
ORDER BY start_time DESC, trace_id, span_id
LIMIT $limit
