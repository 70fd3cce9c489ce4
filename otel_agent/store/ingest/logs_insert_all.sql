INSERT INTO logs BY NAME SELECT * FROM incoming_logs;
