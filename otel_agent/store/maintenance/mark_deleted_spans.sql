-- Retention (lifecycle/retention.py), in the transaction that deletes the span rows or span events it registered
-- as lc_keys (lc_rowid and the table's keys, trace_id among them), before the DELETE: mark their traces, whose
-- run rows the deletion changes, for the maintained state to fold again (store/maintained.py).
INSERT INTO dirty_traces SELECT DISTINCT hash(trace_id), trace_id FROM lc_keys;
