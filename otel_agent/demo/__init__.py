"""``otel-agent demo``: a deterministic, offline "deep research" run that exercises every instrumentation helper.

Modules, one job each:

- ``content``   — the fixed story: every record id (each passed to its helper), sources, excerpts, claims,
  report texts (no randomness, no network).
- ``telemetry`` — TracerProviders and exporters (OTLP/gRPC to a receiver, or the embedded DuckDB exporter).
- ``relay``     — OTLP protobuf frames over a pipe: how the worker's spans reach the embedded exporter.
- ``research``  — the delegating agent: plan → search → verify → synthesize → fact-check handoff.
- ``worker``    — the fact-check worker, a separate OS process (``python -m otel_agent.demo.worker``).
- ``channel``   — the delegator's side of that process: job, approval, events, span relay.
- ``runner``    — one whole demo: store, receiver or exporter, agent, worker, shutdown in the right order.
- ``summary``   — what the demo prints, read back from the DuckDB file, and the SQL to explore it.

Importing this package imports nothing heavy (the worker process starts from here).
"""
