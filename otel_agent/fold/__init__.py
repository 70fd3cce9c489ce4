"""OTLP → columnar batches. The one implementation of "OTLP into tables", shared by the receiver and the
embedded DuckDB exporter."""
