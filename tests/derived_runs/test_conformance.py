"""The conformance table of docs/semconv.md ("Conformance of the derived views") cannot drift: one span per row
gets the category the row says, and every value the classification SQL recognises has a row."""

from __future__ import annotations

import re
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent.store.statements import statement
from tests.derived_runs.runs_support import query, write_store

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Conformance of the derived views"


def rows() -> list[tuple[str, str, str]]:
    """(attribute, value, category) of each row of the section's first table."""
    doc = (ROOT / "docs" / "semconv.md").read_text(encoding="utf-8")
    section = doc[doc.index(HEADING) :]
    table = section[section.index("| family |") : section.index("\n\n", section.index("| family |"))]
    out = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        ticks = [re.findall(r"`([^`]+)`", c) for c in cells]
        out.append((ticks[1][0], ticks[2][0], ticks[3][0]))
    return out


def test_each_row_gets_its_category(tmp_path: Path) -> None:
    table = rows()
    assert len(table) >= 40
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("conformance")
    for n, (attribute, value, _) in enumerate(table):
        attributes: dict[str, str] = {attribute: value}
        if attribute == "gen_ai.system":
            attributes["gen_ai.request.model"] = "gpt-4o"
        with tracer.start_as_current_span(f"row {n}", attributes=attributes):
            pass
    provider.shutdown()
    path = write_store(tmp_path / "conformance.duckdb", list(exporter.get_finished_spans()))
    got = {r["span_name"]: r["category"] for r in query(path, "SELECT span_name, category FROM classified_spans")}
    wrong = [(a, v, c, got.get(f"row {n}")) for n, (a, v, c) in enumerate(table) if got.get(f"row {n}") != c]
    assert wrong == []


def recognised_values() -> set[tuple[str, str]]:
    """Every (attribute, value) the classification SQL maps to a category."""
    sql = statement("views/runs/classified")
    values: set[tuple[str, str]] = set()
    for equal, listed in re.findall(r"op_name\s*(?:=\s*'([a-z_]+)'|IN\s*\(([^)]*)\))", sql):
        for v in [equal] if equal else re.findall(r"'([a-z_]+)'", listed):
            values.add(("gen_ai.operation.name", v))
    oi = sql[sql.index("CASE oi_kind") : sql.index("END", sql.index("CASE oi_kind"))]
    values |= {("openinference.span.kind", v) for v in re.findall(r"WHEN '([A-Z]+)' THEN", oi)}
    tl = sql[sql.index("CASE tl_kind") : sql.index("END", sql.index("CASE tl_kind"))]
    values |= {("traceloop.span.kind", v) for v in re.findall(r"WHEN '([a-z_]+)' THEN", tl)}
    llm = re.search(r"llm_request_type IN \(([^)]*)\)", sql)
    assert llm
    values |= {("llm.request.type", v) for v in re.findall(r"'([a-z_]+)'", llm.group(1))}
    return values


def test_every_recognised_value_has_a_row() -> None:
    documented = {(a, v) for a, v, _ in rows()}
    recognised = recognised_values()
    assert len(recognised) >= 35
    assert sorted(recognised - documented) == []


def test_every_event_read_has_a_row() -> None:
    """Each log event name a run view reads (event_name = '...') is in the events table of the section."""
    doc = (ROOT / "docs" / "semconv.md").read_text(encoding="utf-8")
    section = doc[doc.index(HEADING) :]
    start = section.index("| family | event |")
    events = set(re.findall(r"^\| [^|]+ \| `([^`]+)`", section[start : section.index("\n\n", start)], re.M))
    read: set[str] = set()
    for name in ("classified", "evaluations", "call_content"):
        read |= set(re.findall(r"event_name = '([a-z_.]+)'", statement(f"views/runs/{name}")))
    assert "gen_ai.client.operation.exception" in read
    assert sorted(read - events) == []
