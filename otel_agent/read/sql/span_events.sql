-- span_events: the events of one span (exceptions with their message), at most 200, in order.
SELECT event_index, name, time, attributes::VARCHAR AS attributes
FROM span_events
WHERE trace_id = $trace_id AND span_id = $span_id
ORDER BY event_index
LIMIT 200
