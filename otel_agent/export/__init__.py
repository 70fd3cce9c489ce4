"""Exports to files: ``otel-agent export report`` (the Markdown report of an artifact version, citations
injected: ``read.reports``) and ``otel-agent export bundle`` (a run's JSON evidence bundle:
``read.artifacts.evidence_bundle``). What they contain is the read layer's, so the console's downloads are the
same bytes; this package writes them where the user asked, from a closed file, shards or a live receiver."""
