-- health_scope: prepare the Observability page's cursor so its three health macros (provider_health_between,
-- skill_health_between, tool_usage_between) parse the spans of [getvariable('console_t0'),
-- getvariable('console_t1')) once between them, and only the spans that can be one of theirs.
-- Unchanged, each macro normalises every stored span (oa_normalised_all(NULL): the JSON of every span parsed)
-- and then keeps its category and its window; over all time on a 1 M-span store that is three full parses and
-- more than the page's query limit. Here, before any JSON is parsed:
--   * the rows that had ended before t0 (and started before it) are left out: every span started from t0 on,
--     and every span it can be nested in (a parent is still running when its child starts), are kept. No
--     upper bound: a re-delivered span's versions may start on either side of t1, and the macros pick the
--     version first, then apply their window;
--   * a row whose promoted record_kind (fold/promoted.py: attributes->>'otel_agent.record.kind', the value
--     the views classify by first) names a kind of ours other than the three categories read here is left out
--     (the views then classify it 'record', 'step', …, never one of these); rows without one — third-party
--     spans of any convention — are all kept and classified by the views' own rules.
-- The kept rows are normalised once (the views' oa_normalised_all) into a temporary table of the columns the
-- three macros read, kept for the three categories; a temporary oa_normalised_all of the same name (DuckDB
-- looks in the temp catalog first) hands it to the macros, which then deduplicate, nest and window it as
-- before: same rows (checked against the unscoped macros on the 1 M-span store, equal up to float rounding).
-- The temporary objects belong to the page job's cursor and go with it.
CREATE TEMP MACRO oa_scoped_spans(rid) AS TABLE
SELECT *
FROM spans
WHERE rid IS NULL
  AND (getvariable('console_t0') IS NULL
       OR end_time >= CAST(getvariable('console_t0') AS TIMESTAMP_NS)
       OR start_time >= CAST(getvariable('console_t0') AS TIMESTAMP_NS))
  AND (record_kind IS NULL OR record_kind = ''
       OR record_kind IN ('provider_call', 'proxy_request', 'skill_invocation', 'tool_invocation'));
CREATE TEMP TABLE console_health_rows AS
WITH n AS MATERIALIZED (
    -- materialised before the category filter, as in the macros: a filter pushed into the normalisation
    -- would parse the JSON once per attribute it reads
    SELECT trace_id, span_id, parent_span_id, name, start_time, end_time, received_at, duration_ns, status_code,
           attr_error_type, base_category, provider, request_model, response_model, retry_count, input_tokens,
           output_tokens, skill_name, skill_version, attr_tool_name, tool_provider, reported_cost_usd, mcp_method,
           jsonrpc_request_id, in_progress
    FROM oa_normalised_all(NULL)
)
SELECT * FROM n WHERE base_category IN ('provider_call', 'skill_invocation', 'tool_invocation');
CREATE TEMP MACRO oa_normalised_all(rid, latest := false) AS TABLE SELECT * FROM temp.main.console_health_rows;
