CREATE OR REPLACE TEMP TABLE _dup_logs AS
    SELECT l.time, l.content_hash
    FROM logs l SEMI JOIN incoming_logs b USING (time, content_hash);

INSERT INTO logs BY NAME
    SELECT * FROM incoming_logs b
    WHERE NOT EXISTS (SELECT 1 FROM _dup_logs d WHERE d.time = b.time AND d.content_hash = b.content_hash)
    QUALIFY row_number() OVER (PARTITION BY time, content_hash) = 1;
