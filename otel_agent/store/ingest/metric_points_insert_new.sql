CREATE OR REPLACE TEMP TABLE _dup_points AS
    SELECT m.time, m.content_hash
    FROM metric_points m SEMI JOIN incoming_metric_points b USING (time, content_hash);

INSERT INTO metric_points BY NAME
    SELECT * FROM incoming_metric_points b
    WHERE NOT EXISTS (SELECT 1 FROM _dup_points d WHERE d.time = b.time AND d.content_hash = b.content_hash)
    QUALIFY row_number() OVER (PARTITION BY time, content_hash) = 1;
