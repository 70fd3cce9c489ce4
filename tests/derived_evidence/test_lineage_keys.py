"""The tables the receiver writes with each batch for lineage lookups (store/schema/060_lineage_keys.sql,
070_retrieval_documents.sql): each equals its rule applied to the stored spans, re-delivery adds nothing, a
schema-2 store gets them filled when opened for writing, and claim_lineage_of finds through them what the
views find by scanning everything."""

from __future__ import annotations

import json
import os
from collections import Counter

import duckdb

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.lineage import lineage_key
from otel_agent.store.database import SCHEMA_VERSION, open_store
from tests.derived_evidence.support import Store, request, span

KEYS = "SELECT key, end_time, next_key, kind FROM lineage_keys"
KEYS_RULE = "SELECT key, end_time, next_key, kind FROM lineage_keys_of('spans')"
DOCS = "SELECT * FROM parsed_retrieval_documents"
DOCS_RULE = "SELECT * FROM retrieval_documents_in('spans')"


def multiset(store: Store, sql: str) -> Counter:
    return Counter(store.rows(sql))


def test_written_rows_equal_the_rules_over_the_stored_spans(store: Store, research) -> None:
    keys = multiset(store, KEYS)
    assert keys == multiset(store, KEYS_RULE)
    # every claim, evidence item and source is found by its id, every citation by its claim's id, leading on
    # to the evidence it cites, and every evidence item leads on to its source
    missing = store.rows(
        """
        SELECT s.record_kind, s.record_id FROM spans s
        WHERE s.record_kind IN ('claim', 'citation', 'evidence_item', 'source')
          AND NOT EXISTS (
              SELECT 1 FROM lineage_keys k
              WHERE k.end_time = s.end_time AND k.kind = s.record_kind
                AND k.key = lineage_key(CASE s.record_kind WHEN 'citation' THEN s.record_ref ELSE s.record_id END)
                AND k.next_key IS NOT DISTINCT FROM CASE s.record_kind
                    WHEN 'citation' THEN lineage_key(s.attributes->>'otel_agent.citation.evidence_id')
                    WHEN 'evidence_item' THEN lineage_key(s.record_ref) END)
        """
    )
    assert missing == []
    (records,) = store.rows(
        "SELECT count(*) FROM spans WHERE record_kind IN ('claim', 'citation', 'evidence_item', 'source')"
    )[0]
    assert records > 10

    docs = store.dicts(DOCS + " ORDER BY origin, doc_index")
    assert Counter(tuple(d.values()) for d in docs) == multiset(store, DOCS_RULE)
    assert [(d["origin"], d["doc_index"], d["document_id"], d["score"], d["url"], d["provider"]) for d in docs] == [
        ("gen_ai", 0, "doc_g1", 0.8, None, "web_index"),
        ("openinference", 0, "kb_7", 0.91, "https://kb.example/memory", None),
        ("openinference", 1, None, 0.2, None, None),
    ]
    # a document's evidence id leads on to its source (the document id, or doc:… without one)
    for evidence, source in [
        (research.ids["oi_evidence"], "kb_7"),
        (research.ids["oi_evidence_1"], "doc:" + research.ids["oi_evidence_1"].removeprefix("retrieval:")),
    ]:
        (ev_key, src_key) = store.rows("SELECT lineage_key(?), lineage_key(?)", [evidence, source])[0]
        assert [(nxt, kind) for (k, _, nxt, kind) in keys.elements() if k == ev_key] == [(src_key, "retrieval")]
        assert any(k == src_key and nxt is None for (k, _, nxt, _) in keys)


def test_redelivery_adds_no_rows(store: Store, research, tmp_path) -> None:
    before = (multiset(store, KEYS), multiset(store, DOCS))
    store.ingest_spans(research.spans)
    store.ingest_spans(list(reversed(research.spans)))
    assert (multiset(store, KEYS), multiset(store, DOCS)) == before
    # a batch of new and already stored spans takes the re-delivery path (the SQL rule, for the new ones only)
    partial = Store(tmp_path / "partial.duckdb")
    partial.ingest_spans(research.spans[::2])
    partial.ingest_spans(research.spans)
    assert (multiset(partial, KEYS), multiset(partial, DOCS)) == before
    partial.close()


def test_a_schema_2_store_gets_them_when_opened_for_writing(tmp_path, research) -> None:
    path = tmp_path / "v2.duckdb"
    s = Store(path)
    s.ingest_spans(research.spans)
    expected = (multiset(s, KEYS), multiset(s, DOCS))
    s.close()
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE lineage_keys")
    con.execute("DROP TABLE parsed_retrieval_documents")
    con.execute("UPDATE otel_agent_meta SET value = '2' WHERE key = 'schema_version'")
    con.close()

    con = open_store(path)
    assert con.execute("SELECT value FROM otel_agent_meta WHERE key = 'schema_version'").fetchall() == [
        (SCHEMA_VERSION,)
    ]
    assert Counter(con.execute(KEYS).fetchall()) == expected[0]
    assert Counter(con.execute(DOCS).fetchall()) == expected[1]
    assert con.execute("SELECT index_name FROM duckdb_indexes()").fetchall() == []  # no index (060_lineage_keys.sql)
    con.close()


def test_a_store_made_with_the_old_index_loses_it_and_keeps_its_rows(tmp_path, research) -> None:
    """Stores written before issue 16 have an ART index on lineage_keys.key: opening one for writing drops it
    (the writer no longer pays for it on every commit and checkpoint), its rows stay, and lookups still find
    them."""
    path = tmp_path / "indexed.duckdb"
    s = Store(path)
    s.ingest_spans(research.spans)
    expected = multiset(s, KEYS)
    claim = "cl_supported"  # two citations: one to local evidence, one to another trace's
    lineage = s.rows("SELECT citation_id, evidence_id, source_id FROM claim_lineage_of(?) ORDER BY ALL", [claim])
    s.close()
    con = duckdb.connect(str(path))
    con.execute("CREATE INDEX lineage_keys_key ON lineage_keys (key)")
    assert con.execute("SELECT count(*) FROM duckdb_indexes()").fetchone() == (1,)
    con.close()

    s = Store(path)
    assert s.rows("SELECT index_name FROM duckdb_indexes()") == []
    assert multiset(s, KEYS) == expected
    again = s.rows("SELECT citation_id, evidence_id, source_id FROM claim_lineage_of(?) ORDER BY ALL", [claim])
    assert again == lineage
    assert len(lineage) >= 2
    s.close()


def test_a_source_retrieved_twice_is_its_earliest_copy_in_both(tmp_path) -> None:
    """Our evidence item cites a document id that two GenAI retrieval spans returned: the source is the earlier
    retrieval, in the view and in the one-claim lookup (which finds it through the document's key)."""
    s = Store(tmp_path / "twice.duckdb")

    def retrieval(t: float, url: str) -> dict:
        docs = [{"id": "kb_1", "content": "Passage", "score": 0.8, "url": url}]
        return span(f"retrieval kb{t:g}", {"gen_ai.operation.name": "retrieval",
                                          "gen_ai.data_source.id": f"kb-{t:g}",
                                          "gen_ai.retrieval.documents": json.dumps(docs)}, t=t)  # fmt: skip

    s.ingest(request([retrieval(50, "https://late.example")]))
    s.ingest(request([retrieval(10, "https://early.example")]))
    s.ingest(
        request(
            [
                span(
                    "otel_agent.evidence_item",
                    {
                        "otel_agent.record.kind": "evidence_item",
                        "otel_agent.evidence.id": "ev_1",
                        "otel_agent.evidence.source_id": "kb_1",
                        "otel_agent.evidence.excerpt": "Passage",
                    },
                    t=60,
                ),
                span(
                    "otel_agent.claim",
                    {
                        "otel_agent.record.kind": "claim",
                        "otel_agent.claim.id": "cl_1",
                        "otel_agent.claim.text": "A claim",
                    },
                    t=61,
                ),
                span(
                    "otel_agent.citation",
                    {
                        "otel_agent.record.kind": "citation",
                        "otel_agent.citation.id": "ci_1",
                        "otel_agent.citation.claim_id": "cl_1",
                        "otel_agent.citation.evidence_id": "ev_1",
                        "otel_agent.citation.status": "valid",
                    },
                    t=62,
                ),
            ]
        )
    )
    fast = s.dicts("SELECT * FROM claim_lineage_of('cl_1')")
    assert fast == s.dicts("SELECT * FROM claim_lineage WHERE claim_id = 'cl_1'")
    assert [(r["source_id"], r["source_url"], r["source_provider"], r["claim_status"]) for r in fast] == [
        ("kb_1", "https://early.example", "kb-10", "supported")
    ]
    s.close()


def test_fold_and_sql_rules_agree_on_odd_records(tmp_path) -> None:
    """The fold computes lineage rows and reads retrieval documents in Python (fold/lineage.py, documents.py);
    record_lineage_keys, retrieval_documents_in and document_lineage_keys are the SQL twins the migration and
    the re-delivery path use. Lists with numbers and objects, missing ids, a list that is not one, which spans
    count as retrieval spans, and every document form and its odd values must come out the same."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from tests.otlp_builders import kvs

    def add(scope, name: str, attributes: dict) -> None:
        s = scope.spans.add()
        s.trace_id, s.span_id, s.name = os.urandom(16), os.urandom(8), name
        s.start_time_unix_nano = s.end_time_unix_nano = 1_767_261_600_000_000_000 + len(scope.spans)
        s.attributes.extend(kvs(attributes))

    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(kvs({"service.name": "rag"}))
    ours, oi = rs.scope_spans.add(), rs.scope_spans.add()
    ours.scope.name, oi.scope.name = "tests", "OpenInference.Instrumentation.X"
    kind = "otel_agent.record.kind"
    add(
        ours,
        "otel_agent.conflict",
        {
            kind: "conflict",
            "otel_agent.conflict.id": "cf",
            "otel_agent.conflict.claim_ids": [1, "c 2", "", "ü"],
            "otel_agent.conflict.evidence_ids": "not a list",
        },
    )
    add(
        ours,
        "otel_agent.citation",
        {kind: "citation", "otel_agent.citation.id": "ci", "otel_agent.citation.claim_id": "c1"},
    )  # no evidence id
    add(
        ours,
        "otel_agent.citation",
        {kind: "citation", "otel_agent.citation.id": "ci2", "otel_agent.citation.evidence_id": "e1"},
    )  # no claim id: no row
    add(ours, "otel_agent.evidence_item", {kind: "evidence_item", "otel_agent.evidence.id": 42})
    add(ours, "otel_agent.claim", {kind: "claim"})  # no id: no row
    add(ours, "otel_agent.step", {kind: "step", "otel_agent.step.id": "s1"})  # not a lineage record
    genai = json.dumps(
        [
            {"id": "x", "text": "t", "score": " 1e3 ", "metadata": {"source": "s"}},
            "str",
            None,
            {"id": "y", "metadata": "5", "title": "T", "url": ""},
        ]
    )
    for name in ("retrieval", "retrieval web", "retrievalweb", "Retrieval"):
        add(ours, name, {"gen_ai.retrieval.documents": genai, "gen_ai.data_source.id": "kb", "otel_agent.run.id": 7})
    add(ours, "retrieval", {"gen_ai.retrieval.documents": '{"id": 1}'})  # not an array: no document
    add(
        oi,
        "VectorStoreRetriever",
        {
            "retrieval.documents.0.document.id": "d2",
            "retrieval.documents.0.document.score": "0.5",
            "retrieval.documents.0.document.metadata": '{"url":  "u", "n": 1.0e-7}',
            "retrieval.documents.1.document.content": "",
            "retrieval.documents.1.document.score": True,
            "retrieval.documents.2.document.metadata": "not json",
            "retrieval.documents.03.document.id": "skipped",
            "db.system": "chroma",
        },
    )
    add(
        oi,
        "Retriever",
        {"retrieval.documents": [{"document.id": 5, "document.metadata": {"b": 1.5, "a": [1, 2]}, "url": 7}]},
    )
    add(oi, "ChatModel", {"llm.model_name": "gpt-4o"})  # an OpenInference span without documents

    s = Store(tmp_path / "odd.duckdb")
    batch = decode_payload("traces", PROTOBUF, req.SerializeToString(), s.redactor, None, 0)
    s.writer.write(batch)
    assert multiset(s, KEYS) == multiset(s, KEYS_RULE)
    assert multiset(s, DOCS) == multiset(s, DOCS_RULE)
    assert s.rows("SELECT count(*) FROM spans WHERE is_retrieval_span(name, scope_name)") == [(6,)]
    docs = s.rows(
        "SELECT origin, doc_index, document_id, content, score, metadata, url, title, provider, run_id "
        "FROM parsed_retrieval_documents ORDER BY ALL"
    )
    assert docs == sorted(
        [("gen_ai", 0, "x", "t", 1000.0, '{"source":"s"}', "s", None, "kb", "7")] * 2
        + [("gen_ai", 3, "y", None, None, "5", "", "T", "kb", "7")] * 2
        + [
            ("openinference", 0, "d2", None, 0.5, '{"url":  "u", "n": 1.0e-7}', "u", None, "chroma", None),
            ("openinference", 1, None, "", None, None, None, None, "chroma", None),
            ("openinference", 2, None, None, None, None, None, None, "chroma", None),
            ("openinference", 0, "5", None, None, '{"a":[1,2],"b":1.5}', "7", None, None, None),
        ]
    )
    fold_rows = Counter(s.rows("SELECT key, next_key FROM lineage_keys"))
    assert Counter(k for (k,) in s.rows("SELECT kind FROM lineage_keys")) == Counter(
        {"conflict": 4, "citation": 1, "evidence_item": 1, "retrieval": 2 * 8}
    )
    doc_rows = Counter()
    for t, sp, n, d in s.rows("SELECT trace_id, span_id, doc_index, document_id FROM parsed_retrieval_documents"):
        source = d if d is not None else f"doc:{t}:{sp}:{n}"
        doc_rows.update([(lineage_key(f"retrieval:{t}:{sp}:{n}"), lineage_key(source)), (lineage_key(source), None)])
    records = [(lineage_key(i), None) for i in ("1", "c 2", "", "ü", "c1", "42")]
    assert fold_rows == Counter(records) + doc_rows
    s.close()


def test_documents_without_a_run_id_take_their_parents_or_their_traces_run(tmp_path) -> None:
    """A retrieval span of another convention carries no run id: its documents belong to its parent's run, else
    to the earliest run of its trace (retrieval_documents, 020_records.sql). claim_lineage_of finds those runs
    through the document spans' parents only (035_lineage_of.sql, orphan_spans), and must agree with the view."""
    s = Store(tmp_path / "orphans.duckdb")
    trace_a, trace_b = os.urandom(16), os.urandom(16)
    parent_a = os.urandom(8)

    def retrieval(t: float, trace_id: bytes, doc: str) -> dict:
        docs = [{"id": doc, "content": f"Passage {doc}", "score": 0.7}]
        return span(f"retrieval {doc}", {"gen_ai.operation.name": "retrieval",
                                         "gen_ai.retrieval.documents": json.dumps(docs)},
                    t=t, trace_id=trace_id)  # fmt: skip

    spans = [
        span("earlier run", {"otel_agent.run.id": "run_a_first"}, t=0, trace_id=trace_a),  # the trace's earliest
        span("agent step", {"otel_agent.run.id": "run_parent"}, t=5, trace_id=trace_a, span_id=parent_a),
        retrieval(10, trace_a, "kb_p"),
        span("plan", {"otel_agent.run.id": "run_trace_first"}, t=1, trace_id=trace_b),
        span("act", {"otel_agent.run.id": "run_later"}, t=3, trace_id=trace_b),
        retrieval(12, trace_b, "kb_t"),
    ]
    req = request(spans)
    req.resource_spans[0].scope_spans[0].spans[2].parent_span_id = parent_a
    s.ingest(req)
    evidence = s.rows(
        "SELECT document_id, 'retrieval:' || trace_id || ':' || span_id || ':' || doc_index "
        "FROM parsed_retrieval_documents ORDER BY document_id"
    )
    assert [d for d, _ in evidence] == ["kb_p", "kb_t"]
    records = [span("otel_agent.claim", {"otel_agent.record.kind": "claim", "otel_agent.claim.id": "cl_r",
                                         "otel_agent.claim.text": "Two retrieved passages say so"}, t=20)]  # fmt: skip
    for i, (_, evidence_id) in enumerate(evidence):
        records.append(span("otel_agent.citation", {"otel_agent.record.kind": "citation",
                                                    "otel_agent.citation.id": f"ci_{i}",
                                                    "otel_agent.citation.claim_id": "cl_r",
                                                    "otel_agent.citation.evidence_id": evidence_id,
                                                    "otel_agent.citation.status": "valid"}, t=21 + i))  # fmt: skip
    s.ingest(request(records))
    fast = s.dicts("SELECT * FROM claim_lineage_of('cl_r') ORDER BY citation_id")
    assert fast == s.dicts("SELECT * FROM claim_lineage WHERE claim_id = 'cl_r' ORDER BY citation_id")
    assert [(r["source_id"], r["evidence_run_id"], r["supports"]) for r in fast] == [
        ("kb_p", "run_parent", True),
        ("kb_t", "run_trace_first", True),
    ]
    s.close()
