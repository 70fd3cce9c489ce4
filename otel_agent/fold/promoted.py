"""Attributes copied into typed ``spans`` columns at fold time, so the derived views find a run's spans and a
record by its id without parsing every span's JSON (issue 4 §5: measured in bench/derive.py and
bench/derive_evidence.py).

The JSON ``attributes`` column stays the complete, authoritative copy; each promoted column holds exactly
what ``attributes->>key`` returns for its key (a string as it is, any other value as its JSON text), taken
after redaction. Which key is a record's id (``record_id``) and which names the record it points at
(``record_ref``) comes from the instrumentation registry (``record_id`` / ``record_ref`` of each span kind).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import orjson

RUN_ID_KEY = "otel_agent.run.id"
RECORD_KIND_KEY = "otel_agent.record.kind"
PROMOTED_COLUMNS = ("run_id", "record_kind", "record_id", "record_ref")
"""The typed columns, in table order (after the span's own OTLP fields)."""

_REGISTRY = Path(__file__).resolve().parents[1] / "instrument" / "registry.json"


@cache
def record_keys() -> dict[str, tuple[str, str | None]]:
    """record kind → (key of its id, key of the id it refers to or None). Read from the file, not through
    ``otel_agent.instrument``, so decode workers do not import the instrumentation."""
    registry = json.loads(_REGISTRY.read_text(encoding="utf-8"))
    return {s["record_kind"]: (s["record_id"], s.get("record_ref")) for s in registry["spans"] if "record_id" in s}


def as_text(value: Any) -> str | None:
    """``attributes->>key`` of a decoded attribute value (objects with their keys sorted, as stored)."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def promote(attributes: dict[str, Any], keys: dict[str, tuple[str, str | None]]) -> tuple[Any, Any, Any, Any]:
    """(run_id, record_kind, record_id, record_ref) of one span's redacted attribute dict."""
    kind = as_text(attributes.get(RECORD_KIND_KEY))
    id_keys = keys.get(kind) if kind is not None else None
    if id_keys is None:
        return as_text(attributes.get(RUN_ID_KEY)), kind, None, None
    id_key, ref_key = id_keys
    return (
        as_text(attributes.get(RUN_ID_KEY)),
        kind,
        as_text(attributes.get(id_key)),
        as_text(attributes.get(ref_key)) if ref_key else None,
    )


def json_expressions() -> dict[str, str]:
    """column → the SQL expression that computes it from ``attributes`` (the fold's rule, written in SQL: the
    migration fills old stores with it and a test checks the fold against it). Keys are constants of our
    registry, quoted as SQL string literals."""

    def lit(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    kind = f"attributes->>{lit(RECORD_KIND_KEY)}"
    keys = sorted(record_keys().items())
    ids = " ".join(f"WHEN {lit(k)} THEN attributes->>{lit(i)}" for k, (i, _) in keys)
    refs = " ".join(f"WHEN {lit(k)} THEN attributes->>{lit(r)}" for k, (_, r) in keys if r is not None)
    return {
        "run_id": f"attributes->>{lit(RUN_ID_KEY)}",
        "record_kind": kind,
        "record_id": f"CASE {kind} {ids} END",
        "record_ref": f"CASE {kind} {refs} END",
    }


def backfill_sql() -> str:
    """One UPDATE that fills the promoted columns from the JSON (migrating a store of schema version 1)."""
    return "UPDATE spans SET " + ", ".join(f"{col} = {expr}" for col, expr in json_expressions().items())
