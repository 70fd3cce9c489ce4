INSERT INTO metric_points BY NAME SELECT * FROM incoming_metric_points;
