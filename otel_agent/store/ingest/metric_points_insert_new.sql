-- Re-delivery path: only the data points not stored yet, one copy each (views/ingest/010_redelivery.sql).
INSERT INTO metric_points BY NAME SELECT * FROM oa_not_stored('metric_points', 'incoming_metric_points');
