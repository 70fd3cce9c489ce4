-- Fast path: no span of the batch is stored yet and none repeats, so every row goes in as it is.
INSERT INTO spans BY NAME SELECT * FROM incoming_spans;
INSERT INTO span_events BY NAME SELECT * FROM incoming_span_events;
INSERT INTO span_links BY NAME SELECT * FROM incoming_span_links;
