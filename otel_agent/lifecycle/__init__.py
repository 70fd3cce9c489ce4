"""The store's lifetime: retention of the live DuckDB file, the rolling Parquet archive, and reading both."""
