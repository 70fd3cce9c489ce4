"""Exports of the evidence model: the Markdown report of an artifact version with its citations injected
(``report``), and the JSON evidence bundle of a run (``bundle``). Both read the derived views through
``otel_agent.query.client.run_sql``, so they work on a closed file, on shards, and against a live receiver."""

from __future__ import annotations

from otel_agent.export.bundle import build_bundle
from otel_agent.export.reader import Reader
from otel_agent.export.report import Report, build_report

__all__ = ["Reader", "Report", "build_bundle", "build_report"]
