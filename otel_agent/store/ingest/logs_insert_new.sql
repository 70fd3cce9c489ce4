-- Re-delivery path: only the log records not stored yet, one copy each (views/ingest/010_redelivery.sql).
INSERT INTO logs BY NAME SELECT * FROM oa_not_stored('logs', 'incoming_logs');
