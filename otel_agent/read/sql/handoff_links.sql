-- handoff_links: span links that cross out of, or into, a set of traces ($trace_ids): the one-click way from
-- delegated work to the worker's trace and back (console/pages/run.py, trace.py). direction 'out': a span
-- here links to a span elsewhere (the worker's acceptance points at the delegation); 'in': a span elsewhere
-- links to one here. The other side's run: its otel_agent.run.id, else its trace id.
WITH here AS (SELECT unnest($trace_ids::VARCHAR[]) AS trace_id)
SELECT 'out' AS direction, l.trace_id, l.span_id, l.linked_trace_id AS other_trace_id,
       l.linked_span_id AS other_span_id, o.name AS other_name, o.service_name AS other_service,
       coalesce(o.run_id, l.linked_trace_id) AS other_run_id, o.span_id IS NOT NULL AS other_stored,
       l.attributes::VARCHAR AS attributes
FROM span_links l
LEFT JOIN spans o ON o.trace_id = l.linked_trace_id AND o.span_id = l.linked_span_id
WHERE l.trace_id IN (SELECT trace_id FROM here) AND l.linked_trace_id NOT IN (SELECT trace_id FROM here)
UNION ALL
SELECT 'in', l.linked_trace_id, l.linked_span_id, l.trace_id, l.span_id, o.name, o.service_name,
       coalesce(o.run_id, l.trace_id), o.span_id IS NOT NULL, l.attributes::VARCHAR
FROM span_links l
LEFT JOIN spans o ON o.trace_id = l.trace_id AND o.span_id = l.span_id
WHERE l.linked_trace_id IN (SELECT trace_id FROM here) AND l.trace_id NOT IN (SELECT trace_id FROM here)
ORDER BY direction, trace_id, span_id, other_trace_id, other_span_id
LIMIT 200
