-- Fast path, when the fold found lineage rows in the batch (our evidence records, documents of other
-- conventions' retrieval spans): the lineage_keys rows it computed (otel_agent/fold/lineage.py).
INSERT INTO lineage_keys SELECT key, end_time, next_key FROM incoming_lineage_keys;
