-- Layer 4: classified spans with cost. A cost reported on the span wins (otel_agent.cost.usd,
-- OpenInference llm.cost.total or llm.cost.prompt + llm.cost.completion, gen_ai.usage.cost); else, for a
-- provider call, the price table: the row whose provider matches (same family, '*', or the call's provider
-- is unknown — absent, or a name no row of the table has, such as a framework's 'langchain' or 'function' or
-- a proxy's name) and whose model_pattern matches the model key of the response model (else of the request
-- model) — user rows first, then an exact provider over '*', an exact model over a GLOB, the longer pattern,
-- and a match on the response model over one on the request model; else NULL with cost_missing_reason.
--
-- Token pricing (GenAI conventions: input tokens include cached ones):
--   cost = ((input - cache_read - cache_creation) * input_price + cache_read * cache_read_price
--           + cache_creation * cache_write_price + (output - reasoning) * output_price
--           + reasoning * reasoning_price) / 1e6
-- with a missing cache price falling back to the input price, a missing reasoning price to the output price
-- (reasoning tokens are part of output tokens), and missing counts read as 0 (at least one of input/output
-- tokens must be known).
--
-- oa_priced_in(source): those rows for the classified spans in relation `source` (a table, view or CTE named by a
-- string, with oa_classified's columns at least), so a view that needs no step or skill placement prices the
-- spans without the placement's recursive walks (runs_for_run); oa_priced(rid) is oa_priced_in over
-- oa_classified_spans_for_run(rid).
CREATE OR REPLACE MACRO oa_priced_in(source) AS TABLE
WITH cs AS MATERIALIZED (
    SELECT
        *,
        oa_price_provider(provider) AS price_family,
        oa_model_key(response_model) AS response_key,
        oa_model_key(request_model) AS request_key
    FROM query_table(source)
),
wanted AS (
    SELECT DISTINCT
        CASE WHEN price_family IN (SELECT provider FROM price_table) THEN price_family END AS lookup_family,
        price_family, response_key, request_key
    FROM cs
    WHERE category = 'provider_call'
),
matched AS (
    SELECT
        w.price_family, w.response_key, w.request_key,
        p.model_pattern AS price_model_pattern,
        p.provider AS price_provider,
        p.input_usd_per_mtok, p.output_usd_per_mtok, p.cache_read_usd_per_mtok, p.cache_write_usd_per_mtok,
        p.reasoning_usd_per_mtok,
        p.source AS price_source,
        p.source_date AS price_source_date,
        p.origin AS price_origin
    FROM wanted AS w
    JOIN price_table AS p
      ON (p.provider = '*' OR w.lookup_family IS NULL OR p.provider = w.lookup_family)
     AND (w.response_key GLOB p.model_pattern OR w.request_key GLOB p.model_pattern)
    QUALIFY row_number() OVER (
        PARTITION BY w.price_family, w.response_key, w.request_key
        ORDER BY
            p.priority,
            p.provider = '*',
            NOT (p.model_pattern = w.response_key OR p.model_pattern = w.request_key),
            length(p.model_pattern) DESC,
            NOT coalesce(w.response_key GLOB p.model_pattern, false),
            p.model_pattern
    ) = 1
),
costed AS (
    SELECT
        cs.*,
        m.price_model_pattern, m.price_provider, m.price_source, m.price_source_date, m.price_origin,
        CASE
            WHEN cs.category = 'provider_call' AND m.price_model_pattern IS NOT NULL
             AND (cs.input_tokens IS NOT NULL OR cs.output_tokens IS NOT NULL)
            THEN (
                greatest(coalesce(cs.input_tokens, 0) - coalesce(cs.cache_read_tokens, 0)
                         - coalesce(cs.cache_creation_tokens, 0), 0) * m.input_usd_per_mtok
                + coalesce(cs.cache_read_tokens, 0) * coalesce(m.cache_read_usd_per_mtok, m.input_usd_per_mtok)
                + coalesce(cs.cache_creation_tokens, 0)
                    * coalesce(m.cache_write_usd_per_mtok, m.input_usd_per_mtok)
                + greatest(coalesce(cs.output_tokens, 0) - coalesce(cs.reasoning_tokens, 0), 0)
                    * m.output_usd_per_mtok
                + least(coalesce(cs.reasoning_tokens, 0), coalesce(cs.output_tokens, 0))
                    * coalesce(m.reasoning_usd_per_mtok, m.output_usd_per_mtok)
            ) / 1e6
        END AS table_cost_usd
    FROM cs
    LEFT JOIN matched AS m
      ON cs.category = 'provider_call'
     AND m.price_family IS NOT DISTINCT FROM cs.price_family
     AND m.response_key IS NOT DISTINCT FROM cs.response_key
     AND m.request_key IS NOT DISTINCT FROM cs.request_key
)
SELECT
    * EXCLUDE (table_cost_usd, price_family, response_key, request_key),
    coalesce(reported_cost_usd, table_cost_usd) AS cost_usd,
    CASE
        WHEN reported_cost_usd IS NOT NULL THEN 'span'
        WHEN table_cost_usd IS NOT NULL THEN 'price_table'
    END AS cost_source,
    CASE
        WHEN reported_cost_usd IS NOT NULL OR table_cost_usd IS NOT NULL THEN NULL
        WHEN category = 'tool_invocation' THEN 'not_reported'
        WHEN category <> 'provider_call' THEN NULL
        WHEN request_model IS NULL AND response_model IS NULL THEN 'no_model'
        WHEN input_tokens IS NULL AND output_tokens IS NULL THEN 'no_usage'
        ELSE 'no_price'
    END AS cost_missing_reason
FROM costed;

CREATE OR REPLACE MACRO oa_priced(rid) AS TABLE
WITH classified AS (SELECT * FROM oa_classified_spans_for_run(rid))
SELECT * FROM oa_priced_in('classified');
