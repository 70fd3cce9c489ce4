"""Search: spans across runs and runs by any attribute (``key = value``, ``key ~ text``, ``key``: present),
within a time window, a page at a time; and find-in-trace (the spans of some traces whose name or an attribute
value holds a text). Reads the raw ``spans`` table (docs/schema.md), never the run views: a search costs the
spans stored in its window (DuckDB skips row groups by their ``start_time`` bounds), each one's attributes
parsed once, and stops at ``limit`` rows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from otel_agent.errors import InvalidPayloadError
from otel_agent.read.source import Source

MAX_TERMS = 8
COLUMNS = {"name": "name", "service": "service_name", "status": "status_code", "run": "run_id",
           "trace": "trace_id", "span": "span_id", "kind": "kind", "scope": "scope_name"}  # fmt: skip
"""Bare words that name a stored column rather than an attribute key."""
_TERM = re.compile(r"^\s*(?P<key>[^\s=~!]+)\s*(?:(?P<op>!=|=|~)\s*(?P<value>.*?))?\s*$")


@dataclass(frozen=True)
class Term:
    """One condition: ``key`` (an attribute key, ``resource.KEY`` for a resource attribute, or a column of
    ``COLUMNS``), ``op`` (``=`` equals, ``!=`` differs, ``~`` contains, case-insensitive; None: present) and
    ``value``."""

    key: str
    op: str | None
    value: str | None

    def __str__(self) -> str:
        return self.key if self.op is None else f"{self.key} {self.op} {self.value}"


def parse(query: str | None) -> list[Term]:
    """Terms joined by ``and`` or new lines: ``gen_ai.request.model = gpt-4o and name ~ search``. A value may be
    quoted ("…" or '…'). Raises ``InvalidPayloadError`` with what was not understood."""
    parts = [p for p in re.split(r"\n|\s+and\s+|\s+AND\s+|&&", query or "") if p.strip()]
    if len(parts) > MAX_TERMS:
        raise InvalidPayloadError(f"at most {MAX_TERMS} conditions")
    terms = []
    for part in parts:
        m = _TERM.match(part)
        if not m:
            raise InvalidPayloadError(f"not a condition: {part.strip()[:80]!r} (use key = value, key ~ text or key)")
        value = m["value"]
        if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if m["op"] and not value:
            raise InvalidPayloadError(f"{m['key']} {m['op']}: a value is missing")
        terms.append(Term(m["key"], m["op"], value))
    return terms


def _where(terms: list[Term], params: dict[str, Any]) -> list[str]:
    """SQL conditions over ``spans`` for ``terms``, their values added to ``params`` (never in the SQL text)."""
    out = []
    for i, t in enumerate(terms):
        if t.key in COLUMNS:
            expr = f"{COLUMNS[t.key]}::VARCHAR"
            present = f"{COLUMNS[t.key]} IS NOT NULL"
        else:
            column, key = ("resource_attributes", t.key[len("resource."):]) if t.key.startswith("resource.") else (
                "attributes", t.key)  # fmt: skip
            params[f"k{i}"] = key
            expr = f"json_extract_string({column}, [$k{i}])[1]"
            present = f"json_exists({column}, [$k{i}])[1]"
        if t.op is None:
            out.append(present)
            continue
        params[f"v{i}"] = t.value
        if t.op == "=":
            out.append(f"{expr} = $v{i}")
        elif t.op == "!=":
            out.append(f"{expr} IS DISTINCT FROM $v{i}")
        else:
            out.append(f"contains(lower({expr}), lower($v{i}))")
    return out


SPANS_SQL = """
SELECT trace_id, span_id, parent_span_id, name AS span_name, service_name, run_id, start_time,
       duration_ns / 1e6 AS duration_ms, status_code
FROM spans
WHERE ($t0::TIMESTAMP IS NULL OR start_time >= $t0::TIMESTAMP)
  AND ($t1::TIMESTAMP IS NULL OR start_time < $t1::TIMESTAMP)
  AND {where}
QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY end_time DESC, received_at DESC) = 1
ORDER BY start_time DESC, trace_id, span_id
LIMIT $limit OFFSET $offset
"""

RUNS_SQL = """
WITH hits AS (
    SELECT trace_id, span_id, coalesce(run_id, trace_id) AS run_id, start_time, end_time, status_code, {flags}
    FROM spans
    WHERE ($t0::TIMESTAMP IS NULL OR start_time >= $t0::TIMESTAMP)
      AND ($t1::TIMESTAMP IS NULL OR start_time < $t1::TIMESTAMP)
      AND ({any})
)
SELECT run_id, min(start_time) AS first_match, max(end_time) AS last_match, count(DISTINCT span_id) AS matched_spans,
       count(DISTINCT span_id) FILTER (WHERE status_code = 'ERROR') AS matched_errors,
       min(trace_id) AS trace_id, count(DISTINCT trace_id) AS traces
FROM hits
GROUP BY run_id
HAVING {all}
ORDER BY first_match DESC, run_id
LIMIT $limit OFFSET $offset
"""


def search_spans(
    src: Source, terms: list[Term], t0: Any = None, t1: Any = None, limit: int = 50, offset: int = 0
) -> list[dict[str, Any]]:
    """Spans (latest copy each) started in [t0, t1) matching every term, newest first: ``limit`` + 1 rows from
    ``offset`` (one more tells a page there are more)."""
    if not terms:
        return []
    params: dict[str, Any] = {"t0": t0, "t1": t1, "limit": limit + 1, "offset": offset}
    sql = SPANS_SQL.format(where=" AND ".join(_where(terms, params)))
    return src.rows(sql, params, max_rows=limit + 1)


def search_runs(
    src: Source, terms: list[Term], t0: Any = None, t1: Any = None, limit: int = 50, offset: int = 0
) -> list[dict[str, Any]]:
    """Runs (a span's ``otel_agent.run.id``, else its trace) with, for each term, a span started in [t0, t1) that
    matches it (the terms may hold on different spans of the run): how many spans matched, how many of those
    failed, the first and last match. Newest first, ``limit`` + 1 rows from ``offset``."""
    if not terms:
        return []
    params: dict[str, Any] = {"t0": t0, "t1": t1, "limit": limit + 1, "offset": offset}
    conds = _where(terms, params)
    flags = ", ".join(f"({c}) AS m{i}" for i, c in enumerate(conds))
    sql = RUNS_SQL.format(
        flags=flags,
        any=" OR ".join(f"({c})" for c in conds),
        all=" AND ".join(f"bool_or(m{i})" for i in range(len(conds))),
    )
    return src.rows(sql, params, max_rows=limit + 1)


FIND_SQL = """
SELECT DISTINCT trace_id, span_id, name, attributes::VARCHAR AS attributes
FROM spans
WHERE trace_id IN (SELECT unnest($trace_ids::VARCHAR[]))
  AND (contains(lower(name), lower($text)) OR contains(lower(attributes::VARCHAR), lower($text)))
LIMIT $limit
"""


def _values(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _values(v)]
    if isinstance(value, list):
        return [s for v in value for s in _values(v)]
    return [value if isinstance(value, str) else json.dumps(value)]


def find_in_traces(src: Source, trace_ids: list[str], text: str, limit: int = 2000) -> set[str]:
    """Keys (``trace:span``) of the spans of ``trace_ids`` whose name or an attribute *value* holds ``text``
    (case-insensitive; a key alone is no match). Bounded by the traces' own rows."""
    if not text or not trace_ids:
        return set()
    needle = text.lower()
    found = set()
    for r in src.rows(FIND_SQL, {"trace_ids": trace_ids, "text": text, "limit": limit}, max_rows=limit):
        hit = needle in str(r["name"] or "").lower()
        if not hit:
            try:
                attrs = json.loads(r["attributes"] or "{}")
            except ValueError:
                attrs = {}
            hit = any(needle in v.lower() for v in _values(attrs))
        if hit:
            found.add(f"{r['trace_id']}:{r['span_id']}")
    return found
