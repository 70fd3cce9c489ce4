-- span_links: links of one span, both ways: 'out' (this span links to another) and 'in' (another links here).
SELECT 'out' AS direction, l.linked_trace_id AS other_trace_id, l.linked_span_id AS other_span_id,
       o.name AS other_name, o.service_name AS other_service, coalesce(o.run_id, l.linked_trace_id) AS other_run_id,
       l.attributes::VARCHAR AS attributes
FROM span_links l LEFT JOIN spans o ON o.trace_id = l.linked_trace_id AND o.span_id = l.linked_span_id
WHERE l.trace_id = $trace_id AND l.span_id = $span_id
UNION ALL
SELECT 'in', l.trace_id, l.span_id, o.name, o.service_name, coalesce(o.run_id, l.trace_id), l.attributes::VARCHAR
FROM span_links l LEFT JOIN spans o ON o.trace_id = l.trace_id AND o.span_id = l.span_id
WHERE l.linked_trace_id = $trace_id AND l.linked_span_id = $span_id
ORDER BY direction DESC, other_trace_id, other_span_id
LIMIT 100
