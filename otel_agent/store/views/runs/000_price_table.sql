-- The model price table (USD per million tokens). Rebuilt each time a store is opened for writing:
-- otel_agent/store/prices/prices.csv (shipped) plus the CSV named by $OTEL_AGENT_PRICES (origin 'user').
-- See docs/views-runs.md, "Cost".
CREATE OR REPLACE TABLE price_table (
    provider VARCHAR NOT NULL,          -- provider family (see oa_price_provider) or '*' for any provider
    model_pattern VARCHAR NOT NULL,     -- a model key (see oa_model_key) or a GLOB pattern over it
    input_usd_per_mtok DOUBLE NOT NULL,
    output_usd_per_mtok DOUBLE NOT NULL,
    cache_read_usd_per_mtok DOUBLE,     -- NULL: cache reads cost the input price
    cache_write_usd_per_mtok DOUBLE,    -- NULL: cache writes cost the input price
    reasoning_usd_per_mtok DOUBLE,      -- NULL: reasoning tokens cost the output price
    source VARCHAR,
    source_date DATE,
    origin VARCHAR NOT NULL,            -- 'shipped' or 'user'
    priority INTEGER NOT NULL           -- 0 user, 1 shipped: the lower wins
);
