-- Metric data points already stored, by (time, content_hash).
SELECT count(*) AS stored FROM metric_points m SEMI JOIN incoming_metric_points b USING (time, content_hash);
