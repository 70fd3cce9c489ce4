-- Step 3b (store/maintained.py), after step_apply when the scope holds a span that may be a proxy request (the
-- filter oa_proxy_fields applies first, views/runs/065_proxy.sql: without such a span proxy_requests is empty, and
-- its pricing of every span of the scope is skipped): the scope's proxy facts.
INSERT INTO proxy_facts SELECT hash(trace_id), * FROM oa_proxy_facts_computed();
