"""The DuckDB store: raw tables, their versioned schema, and the SQL files that build on them."""
