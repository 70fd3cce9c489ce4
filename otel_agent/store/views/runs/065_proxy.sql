-- Proxy requests (seed 000's proxy_request spans): the requests an LLM proxy / gateway served, with the client
-- it served them for, the stream chunks it relayed and its fallback attempts (docs/views-runs.md, "Proxy
-- requests"). A proxy request is a provider call (classified so: it counts in provider_calls and cost once,
-- and inside the agent's own provider call it is nested, as any second record of one request is); these views
-- list every one, nested or not.
--
-- Recognised: our proxy_request spans (otel_agent.instrument.proxy_request), and LiteLLM proxy spans — the
-- "Received Proxy Server Request" span, or a litellm_request span (LiteLLM's default span name; one renamed
-- through metadata.generation_name is not recognised) carrying what only the proxy fills in
-- (metadata.user_api_key_hash / _alias, metadata.requester_ip_address, metadata.user_agent; the receiver's
-- default redaction drops the user_api_key keys, README "Redaction"), classified as a provider call through
-- their llm.request.type. Client: otel_agent.proxy.client, else LiteLLM's key alias, team alias, user id or
-- user agent, else the standard user_agent.original, else the client's address (LiteLLM's
-- metadata.requester_ip_address, the standard client.address). Stream: gen_ai.request.stream, else llm.is_streaming (LiteLLM, OpenLLMetry).
-- Stream chunks: otel_agent.proxy.stream_chunks, else the OpenLLMetry llm.content.completion.chunk span events.

-- oa_proxy_fields(rid): the proxy attributes of the few spans that can be proxy requests (a filter first, so the
-- classification layers parse nothing more); deduplicated as oa_span_fields_all(rid, latest := true) is.
CREATE OR REPLACE MACRO oa_proxy_fields(rid) AS TABLE
WITH d AS (
    SELECT trace_id, span_id, name, end_time, received_at,
           json_transform(oa_attribute_text(attributes),
               '{"otel_agent.record.kind":"VARCHAR","otel_agent.proxy.client":"VARCHAR",'
                   || '"otel_agent.proxy.stream_chunks":"VARCHAR","metadata.user_api_key_hash":"VARCHAR",'
                   || '"metadata.user_api_key_alias":"VARCHAR","metadata.user_api_key_team_alias":"VARCHAR",'
                   || '"metadata.user_api_key_user_id":"VARCHAR","metadata.user_agent":"VARCHAR",'
                   || '"metadata.requester_ip_address":"VARCHAR","user_agent.original":"VARCHAR",'
                   || '"client.address":"VARCHAR","llm.is_streaming":"VARCHAR"}') AS a
    FROM oa_scoped_spans(rid)
    -- not `record_kind = 'proxy_request'`: a filter on typed columns alone is pushed into the scan of the spans
    -- table, under oa_scoped_spans' all-spans branch, which then no longer empties for a run id given as a
    -- query parameter (every span is scanned: measured 170 ms instead of 9 ms per run, bench/derive.py's store)
    WHERE CAST(attributes AS VARCHAR) LIKE '%"proxy_request"%'
       OR name IN ('Received Proxy Server Request', 'litellm_request')
)
SELECT
    trace_id, span_id,
    CASE WHEN a."otel_agent.record.kind" = 'proxy_request' THEN 'otel_agent' ELSE 'litellm' END AS source,
    coalesce(
        a."otel_agent.proxy.client", a."metadata.user_api_key_alias",
        a."metadata.user_api_key_team_alias", a."metadata.user_api_key_user_id",
        a."metadata.user_agent", a."user_agent.original",
        a."metadata.requester_ip_address", a."client.address"
    ) AS client,
    oa_count(a."otel_agent.proxy.stream_chunks") AS stream_chunks,
    TRY_CAST(lower(a."llm.is_streaming") AS BOOLEAN) AS llm_is_streaming
FROM d
WHERE a."otel_agent.record.kind" = 'proxy_request'
   OR (a."otel_agent.record.kind" IS NULL
       AND (name = 'Received Proxy Server Request'
            OR a."metadata.user_api_key_hash" IS NOT NULL
            OR a."metadata.user_api_key_alias" IS NOT NULL
            OR a."metadata.requester_ip_address" IS NOT NULL
            OR a."metadata.user_agent" IS NOT NULL))
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1;

-- proxy_requests: one row per proxy request (a span classified as a provider call that is a proxy request).
-- oa_proxy_requests_in(source, rid): those rows from the priced spans in relation `source` (named by a string;
-- oa_priced(rid)'s rows), so a macro that also needs other figures of the same priced spans plans the
-- classification once (run_metrics_for_run).
CREATE OR REPLACE MACRO oa_proxy_requests_in(source, rid) AS TABLE
WITH f AS MATERIALIZED (
    SELECT * FROM oa_proxy_fields(rid)
),
chunk_events AS (
    SELECT e.trace_id, e.span_id, count(DISTINCT e.event_index) AS chunks
    FROM span_events AS e
    SEMI JOIN f ON f.trace_id = e.trace_id AND f.span_id = e.span_id
    WHERE e.name = 'llm.content.completion.chunk'
    GROUP BY e.trace_id, e.span_id
)
SELECT
    p.run_id, p.step_id, p.trace_id, p.span_id, p.parent_span_id, p.span_name, f.source, f.client,
    p.operation, p.provider, p.request_model, p.response_model,
    coalesce(p.request_model, p.response_model) AS model,
    coalesce(p.genai_ext.request_stream, f.llm_is_streaming) AS stream,
    coalesce(f.stream_chunks, c.chunks) AS stream_chunks,
    p.genai_ext.time_to_first_chunk_ms AS time_to_first_chunk_ms,
    p.input_tokens, p.output_tokens, p.cost_usd, p.cost_source,
    p.start_time, p.end_time, p.duration_ms, p.status_code, p.is_error, p.error_type,
    coalesce(p.retry_count, 0) AS retries,
    coalesce(p.fallback_count, 0) AS fallbacks,
    CASE WHEN coalesce(p.fallback_count, 0) > 0 THEN p.fallback_from_provider END AS fallback_from_provider,
    CASE WHEN coalesce(p.fallback_count, 0) > 0 THEN p.fallback_from_model END AS fallback_from_model,
    p.nested_call AS nested,
    p.service_name
FROM query_table(source) AS p
JOIN f ON f.trace_id = p.trace_id AND f.span_id = p.span_id
LEFT JOIN chunk_events AS c ON c.trace_id = p.trace_id AND c.span_id = p.span_id
WHERE p.category = 'provider_call';

CREATE OR REPLACE MACRO proxy_requests_for_run(rid) AS TABLE
WITH priced AS (
    SELECT * FROM oa_priced(rid)
)
SELECT * FROM oa_proxy_requests_in('priced', rid);

CREATE OR REPLACE VIEW proxy_requests AS SELECT * FROM proxy_requests_for_run(NULL);

-- proxy_fallbacks: one row per fallback attempt of a proxy request (an otel_agent.fallback event on it), with
-- its status: otel_agent.fallback.status when recorded; else derived (oa_fallback_status) — an attempt followed
-- by another fallback on the same request failed, the last one went as the request went (failed when it ended
-- in error).
CREATE OR REPLACE MACRO oa_fallback_status(recorded, followed, request_failed) AS
    coalesce(
        CASE lower(recorded) WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' END,
        CASE WHEN followed OR request_failed THEN 'failed' ELSE 'succeeded' END
    );

-- oa_fallback_events_in(source): the otel_agent.fallback events of the spans in relation `source` (named by a
-- string; trace_id, span_id: proxy_requests' rows), each event once, numbered per span (no classification).
CREATE OR REPLACE MACRO oa_fallback_events_in(source) AS TABLE
WITH e AS (
    SELECT DISTINCT ON (ev.trace_id, ev.span_id, ev.event_index)
        ev.trace_id, ev.span_id, ev.event_index, ev.time, ev.attributes
    FROM span_events AS ev
    SEMI JOIN query_table(source) AS f ON f.trace_id = ev.trace_id AND f.span_id = ev.span_id
    WHERE ev.name = 'otel_agent.fallback'
)
SELECT
    trace_id, span_id,
    row_number() OVER (PARTITION BY trace_id, span_id ORDER BY event_index) AS attempt,
    oa_text(lower(attributes->>'otel_agent.fallback.from_provider')) AS from_provider,
    oa_text(attributes->>'otel_agent.fallback.from_model') AS from_model,
    oa_text(lower(attributes->>'otel_agent.fallback.to_provider')) AS to_provider,
    oa_text(attributes->>'otel_agent.fallback.to_model') AS to_model,
    oa_text(attributes->>'otel_agent.fallback.reason') AS reason,
    oa_text(attributes->>'otel_agent.fallback.status') AS recorded_status,
    row_number() OVER (PARTITION BY trace_id, span_id ORDER BY event_index DESC) > 1 AS followed,
    time
FROM e;

CREATE OR REPLACE MACRO proxy_fallbacks_for_run(rid) AS TABLE
WITH r AS MATERIALIZED (
    SELECT * FROM proxy_requests_for_run(rid)
)
SELECT
    r.run_id, e.trace_id, e.span_id, r.client, e.attempt,
    e.from_provider, e.from_model, e.to_provider, e.to_model, e.reason,
    oa_fallback_status(e.recorded_status, e.followed, r.is_error) AS status,
    e.recorded_status IS NULL AS status_derived,
    e.time
FROM oa_fallback_events_in('r') AS e
JOIN r ON r.trace_id = e.trace_id AND r.span_id = e.span_id;

CREATE OR REPLACE VIEW proxy_fallbacks AS SELECT * FROM proxy_fallbacks_for_run(NULL);
