"""The promoted span columns (run_id, record_kind, record_id, record_ref; fold/promoted.py): filled at fold
time, equal to what the JSON attributes say, after redaction, and back-filled when a schema-1 store is
migrated."""

from __future__ import annotations

import duckdb
import pytest

from otel_agent.errors import SchemaVersionError
from otel_agent.fold.promoted import PROMOTED_COLUMNS, json_expressions, record_keys
from otel_agent.fold.redact import Action, Redactor, Rule
from otel_agent.store.database import SCHEMA_VERSION, open_store
from otel_agent.store.shards import open_read_only
from tests.derived_evidence.support import Store
from tests.otlp_builders import span_request

COLS = ", ".join(PROMOTED_COLUMNS)
S_COLS = ", ".join(f"s.{c}" for c in PROMOTED_COLUMNS)
# the SQL form of the fold's rule (the migration writes the same expressions)
FROM_JSON = ", ".join(f"{expr} AS {col}" for col, expr in json_expressions().items())


def test_fold_fills_the_columns_as_the_json_says(store: Store) -> None:
    mismatches = store.rows(
        f"SELECT s.trace_id, s.span_id, {S_COLS}, j.* FROM spans s, "
        f"LATERAL (SELECT {FROM_JSON}) j "
        f"WHERE ({S_COLS}) IS DISTINCT FROM (j.run_id, j.record_kind, j.record_id, j.record_ref)"
    )
    assert mismatches == []
    kinds = dict(store.rows("SELECT record_kind, count(record_id) FROM spans GROUP BY ALL"))
    # the research scenario holds every kind of lineage record, each with its id promoted
    for kind in ("source", "evidence_item", "claim", "citation", "artifact", "artifact_version"):
        assert kinds.get(kind, 0) > 0, kind
    refs = store.rows(
        "SELECT count(*) FROM spans WHERE record_kind = 'citation' "
        "AND record_ref = attributes->>'otel_agent.citation.claim_id' AND record_ref IS NOT NULL"
    )[0][0]
    assert refs == kinds["citation"]
    assert store.rows("SELECT count(*) FROM spans WHERE run_id IS NOT NULL")[0][0] > 0


def test_values_of_other_types_and_redaction(tmp_path) -> None:
    s = Store(tmp_path / "types.duckdb")
    s.redactor = Redactor((Rule(r"^otel_agent\.claim\.id$", Action.HASH),))
    s.ingest(
        span_request(
            [
                {"name": "n1", "attributes": {"otel_agent.run.id": 42, "otel_agent.record.kind": "claim",
                                              "otel_agent.claim.id": "secret-claim"}},
                {"name": "n2", "attributes": {"otel_agent.record.kind": "citation", "otel_agent.citation.id": True,
                                              "otel_agent.citation.claim_id": "c-1"}},
                {"name": "n3", "attributes": {"gen_ai.request.model": "gpt-4o"}},
                # a record kind without an id of its own still has its run id promoted; an object value is
                # promoted as attributes->> reads it, keys sorted (mutmut survivors of promote/as_text, issue 37)
                {"name": "n4", "attributes": {"otel_agent.run.id": "run-g", "otel_agent.record.kind": "guard_result"}},
                {"name": "n5", "attributes": {"otel_agent.run.id": {"b": 1, "a": [2]},
                                              "otel_agent.record.kind": "claim", "otel_agent.claim.id": "c-5"}},
            ]
        )
    )  # fmt: skip
    got = {r[0]: r[1:] for r in s.rows(f"SELECT name, {COLS}, attributes->>'otel_agent.claim.id' FROM spans")}
    run_id, kind, record_id, ref, claim_json = got["n1"]
    assert (run_id, kind, ref) == ("42", "claim", None)
    assert record_id == claim_json
    assert record_id != "secret-claim"
    assert got["n2"][:4] == (None, "citation", "true", "c-1")
    assert got["n3"][:4] == (None, None, None, None)
    assert got["n4"][:4] == ("run-g", "guard_result", None, None)
    assert (
        got["n5"][0]
        == '{"a":[2],"b":1}'
        == s.rows("SELECT attributes->>'otel_agent.run.id' FROM spans WHERE name = 'n5'")[0][0]
    )
    s.close()


def test_a_schema_1_store_is_migrated_when_opened_for_writing(tmp_path, research) -> None:
    path = tmp_path / "old.duckdb"
    s = Store(path)
    s.ingest_spans(research.spans)
    expected = s.rows(f"SELECT trace_id, span_id, {COLS} FROM spans ORDER BY ALL")
    s.close()
    # make it what schema 1 wrote: no promoted columns, version 1
    con = duckdb.connect(str(path))
    for name in PROMOTED_COLUMNS:
        con.execute(f"ALTER TABLE spans DROP COLUMN {name}")
    con.execute("UPDATE otel_agent_meta SET value = '1' WHERE key = 'schema_version'")
    con.close()

    with pytest.raises(SchemaVersionError, match="migrate"):
        open_read_only([str(path)])
    con = open_store(path)
    assert con.execute("SELECT value FROM otel_agent_meta WHERE key = 'schema_version'").fetchall() == [
        (SCHEMA_VERSION,)
    ]
    assert con.execute(f"SELECT trace_id, span_id, {COLS} FROM spans ORDER BY ALL").fetchall() == expected
    assert [r[0] for r in con.execute("DESCRIBE spans").fetchall()][-4:] == list(PROMOTED_COLUMNS)
    con.close()


def test_every_record_kind_with_an_id_is_promoted() -> None:
    keys = record_keys()
    assert keys["claim"] == ("otel_agent.claim.id", "otel_agent.claim.artifact_version_id")
    assert keys["citation"][1] == "otel_agent.citation.claim_id"
    assert keys["receipt_transition"] == ("otel_agent.receipt.operation_id", "otel_agent.receipt.handoff_id")
    assert len(keys) >= 15
