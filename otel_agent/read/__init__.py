"""The one read layer: what every face asks the store, by domain, as functions over a ``Source`` returning typed
results. Console pages, CLI commands, MCP tools, the exports and the demo format what these return; none of them
writes SQL of its own (but the user's, through ``read.query``'s sandbox).

- ``source``, ``stores``: where queries run (a DuckDB cursor, a receiver's query API) and how a store is opened
  (files, shards, an archive, a receiver: all explicit arguments, ``Where``).
- ``runs`` (search, a run's page, errors, metrics, cost, manifest), ``tree`` (the one span-tree model),
  ``spans`` (a span, a trace, spans by attribute), ``evidence`` (claims, lineage, decision path),
  ``artifacts`` (artifacts, versions, the evidence bundle), ``reports`` (an artifact version's Markdown report),
  ``receipts`` (the one state order and window conversion), ``health``, ``context`` (context and memory),
  ``sessions`` (sessions and evaluations), ``reviews`` (review and trust writes, through the writer),
  ``schema`` (the public views), ``query`` (untrusted SQL in the query API's sandbox).
- ``words`` and ``text_table``: the one wording of money, unpriced calls, durations and telemetry text.

Queries read only the public views of docs/views-runs.md and docs/views-evidence.md and the raw tables of
docs/schema.md; named queries are ``read/sql/<name>.sql``. Two are cursor *scopes* (``run_scope.sql``,
``health_scope.sql``): scripts that copy one run's (or one time range's) rows into temporary objects named like
the views' inputs so a page classifies them once — they touch ``oa_*`` internals by name, on that cursor only,
and the rows the views give are the same (tests/console/test_console_scopes.py).
"""
