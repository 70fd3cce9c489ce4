-- span_detail: one stored span (its latest copy) with everything OTLP carried, for the node details panel.
SELECT trace_id, span_id, parent_span_id, name, kind, epoch_ns(start_time) AS start_ns, start_time, end_time,
       duration_ns / 1e6 AS duration_ms, status_code, status_message, attributes::VARCHAR AS attributes,
       resource_attributes::VARCHAR AS resource_attributes, service_name, scope_name, scope_version,
       dropped_attributes_count, dropped_events_count, dropped_links_count, principal, run_id, record_kind, record_id
FROM spans
WHERE trace_id = $trace_id AND span_id = $span_id
ORDER BY end_time DESC, received_at DESC
LIMIT 1
