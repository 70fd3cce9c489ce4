-- Fast path, when the fold found lineage rows in the batch (our evidence records, documents of other
-- conventions' retrieval spans): the lineage_keys rows it computed (otel_agent/fold/lineage.py).
INSERT INTO lineage_keys BY NAME SELECT * FROM incoming_lineage_keys;
