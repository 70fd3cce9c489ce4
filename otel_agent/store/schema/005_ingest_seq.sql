-- The number of the group commit that stored a row: spans, span_events and logs carry it (ingest_seq). The writer
-- takes one value per group commit (ingest/writer.py) and stamps every row of it; a row inserted another way gets
-- its own value from the column default. Values grow with commit order, so "every row past seq N" is a scan that
-- zone maps prune to the newest row groups: how the maintained derived state (store/maintained.py) finds what
-- arrived since it last looked, and, through trace_commits, every row of a trace it must fold again.
CREATE SEQUENCE IF NOT EXISTS ingest_seq_gen START WITH 1;
