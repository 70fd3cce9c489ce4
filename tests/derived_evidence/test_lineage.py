"""Evidence lineage: records from two processes and from OpenInference / GenAI retrieval spans, one lineage row
per path, claim support statuses, and how reviews change them (rejected evidence supports nothing)."""

from __future__ import annotations

import pytest

from otel_agent.errors import InvalidPayloadError, NotFoundError
from otel_agent.read.reviews import write_review


def claim_status(store, claim_id):
    return store.dicts("SELECT status, why FROM claim_support WHERE claim_id = ?", [claim_id])[0]


def review(store, *args, **kwargs):
    return store.write(lambda con: write_review(con, *args, **kwargs))


def test_sources_and_evidence_of_every_origin(store, research):
    sources = {r["source_id"]: r for r in store.dicts("SELECT * FROM sources")}
    assert set(sources) == {"src_a", "src_b", "src_far", "kb_7", "doc_g1", next(s for s in sources if s[:4] == "doc:")}
    assert sources["src_a"]["url"] == "https://langchain.com/langgraph"
    assert sources["src_a"]["provider"] == "tavily"
    assert sources["src_a"]["metadata"] == '{"author":"LangChain"}'
    assert sources["src_far"]["run_id"] == "run_crawl"
    assert sources["src_far"]["service_name"] == "crawler"
    assert str(sources["src_far"]["retrieved_at"]) == "2026-08-20 10:00:00"
    assert (sources["kb_7"]["origin"], sources["kb_7"]["url"], sources["kb_7"]["title"]) == (
        "openinference",
        "https://kb.example/memory",
        "KB: memory",
    )
    assert (sources["doc_g1"]["origin"], sources["doc_g1"]["provider"]) == ("gen_ai", "web_index")

    evidence = {r["evidence_id"]: r for r in store.dicts("SELECT * FROM evidence_items")}
    assert set(evidence) == {
        "ev_a1",
        "ev_a2",
        "ev_b1",
        "ev_far",
        research.ids["oi_evidence"],
        research.ids["oi_evidence_1"],
        research.ids["genai_evidence"],
    }
    oi_ev = evidence[research.ids["oi_evidence"]]
    assert (oi_ev["source_id"], oi_ev["excerpt"], oi_ev["score"]) == (
        "kb_7",
        "Memory isolation between agents is hard",
        0.91,
    )
    assert evidence[research.ids["oi_evidence_1"]]["source_id"].startswith("doc:")  # a document without an id
    assert evidence["ev_a1"]["confidence"] == "high"
    assert evidence["ev_a1"]["supports_step"] == "search"
    assert all(r["status"] == "unreviewed" for r in evidence.values())


def test_lineage_one_row_per_path(store, research):
    rows = store.dicts(
        "SELECT citation_id, evidence_id, evidence_found, supports, source_id, source_url, evidence_run_id"
        " FROM claim_lineage WHERE claim_id = 'cl_supported' ORDER BY citation_id"
    )
    assert [(r["citation_id"], r["evidence_id"], r["source_id"], r["supports"]) for r in rows] == [
        ("cit_1", "ev_a1", "src_a", True),
        ("cit_2", "ev_far", "src_far", True),
        ("cit_g", research.ids["genai_evidence"], "doc_g1", True),
    ]
    assert rows[1]["evidence_run_id"] == "run_crawl"  # evidence recorded by another process, joined by id
    uncited = store.dicts("SELECT * FROM claim_lineage WHERE claim_id = 'cl_uncited'")
    assert len(uncited) == 1
    assert uncited[0]["citation_id"] is None
    assert uncited[0]["claim_status"] == "unverified"
    dangling = store.dicts(
        "SELECT evidence_id, evidence_found, supports FROM claim_lineage WHERE claim_id = 'cl_dangling'"
    )
    assert dangling == [{"evidence_id": "ev_missing", "evidence_found": False, "supports": False}]
    assert store.rows("SELECT count(*) FROM claim_lineage") == [(8,)]


def test_claim_support_statuses(store):
    statuses = {r[0]: (r[1], r[2]) for r in store.rows("SELECT claim_id, status, why FROM claim_support")}
    assert statuses == {
        "cl_supported": ("supported", "3 evidence item(s) cited validly and not rejected"),
        "cl_weak": ("unverified", "no valid citation (only weak or invalid ones)"),
        "cl_conflicted": ("conflicted", "in unresolved conflict conflict_1"),
        "cl_uncited": ("unverified", "no citation"),
        "cl_dangling": ("unverified", "cited evidence is not recorded"),
    }


def test_reviews_change_support(store):
    # Rejecting evidence removes its support; rejecting all of it leaves the claim unverified.
    review(store, "evidence", "ev_a1", "reject", "alice", "misquoted")
    assert store.rows("SELECT supporting_evidence FROM claim_support WHERE claim_id = 'cl_supported'") == [(2,)]
    review(store, "evidence_item", "ev_far", "reject", "alice")
    review(store, "evidence_item", store.rows("SELECT evidence_id FROM evidence_items WHERE origin = 'gen_ai'")[0][0],
           "reject", "alice")  # fmt: skip
    assert claim_status(store, "cl_supported") == {
        "status": "unverified",
        "why": "all cited evidence was rejected by review",
    }
    lineage = store.rows("SELECT DISTINCT evidence_status, supports FROM claim_lineage WHERE claim_id = 'cl_supported'")
    assert lineage == [("rejected", False)]
    # A later approval of the same evidence wins (latest verdict).
    review(store, "evidence", "ev_a1", "approve", "bob", "re-checked")
    assert claim_status(store, "cl_supported")["status"] == "supported"
    # Resolving the conflict lifts it; rejecting a claim overrides everything.
    review(store, "conflict", "conflict_1", "acknowledge", "carol")
    assert claim_status(store, "cl_conflicted")["status"] == "conflicted"
    assert store.rows("SELECT status, status_by FROM conflicts") == [("acknowledged", "carol")]
    review(store, "conflict", "conflict_1", "resolve", "carol", "figures reconciled")
    assert claim_status(store, "cl_conflicted")["status"] == "supported"
    review(store, "claim", "cl_conflicted", "reject", "dave", "overstated")
    assert claim_status(store, "cl_conflicted") == {"status": "rejected", "why": "rejected by dave: overstated"}
    # An approved claim without valid citations counts as supported (a human vouched for it).
    review(store, "claim", "cl_uncited", "approve", "dave", "common knowledge")
    assert claim_status(store, "cl_uncited") == {
        "status": "supported",
        "why": "approved by dave without supporting evidence",
    }
    # Annotations never change a status.
    review(store, "claim", "cl_weak", "annotate", "erin", "needs a second source")
    assert claim_status(store, "cl_weak")["status"] == "unverified"
    assert store.rows("SELECT reviews, annotations FROM review_status WHERE target_id = 'cl_weak'") == [(1, 1)]


def test_review_keeps_a_copy_of_the_record_and_is_append_only(store):
    first = review(store, "evidence", "ev_b1", "approve", "alice", "ok")
    second = review(store, "evidence", "ev_b1", "reject", "bob", "no")
    rows = store.dicts("SELECT * FROM reviews WHERE target_id = 'ev_b1' ORDER BY reviewed_at")
    assert [r["decision"] for r in rows] == ["approve", "reject"]
    import json

    before_first, before_second = (json.loads(r["target_snapshot"]) for r in rows)
    assert before_first["excerpt"] == "Adoption figures disagree"
    assert before_first["status"] == "unreviewed"
    assert before_second["status"] == "approved"  # the record as it was just before the second review
    assert first.review_id < second.review_id
    assert store.rows("SELECT status FROM evidence_items WHERE evidence_id = 'ev_b1'") == [("rejected",)]


@pytest.mark.parametrize(
    ("kind", "target", "decision", "error"),
    [
        ("claim", "cl_nope", "approve", NotFoundError),
        ("evidence", "cl_supported", "approve", NotFoundError),  # an id of another kind
        ("widget", "x", "approve", InvalidPayloadError),
        ("claim", "cl_weak", "resolve", InvalidPayloadError),
        ("conflict", "conflict_1", "approve", InvalidPayloadError),
        ("claim", "", "approve", InvalidPayloadError),
    ],
)
def test_invalid_reviews_write_nothing(store, kind, target, decision, error):
    with pytest.raises(error):
        review(store, kind, target, decision, "alice")
    with pytest.raises(InvalidPayloadError):
        review(store, "claim", "cl_weak", "approve", "  ")  # a reviewer is required
    assert store.rows("SELECT count(*) FROM reviews") == [(0,)]


def lineage_rows(store, sql, claim_id):
    return store.rows(f"SELECT to_json(t)::VARCHAR FROM ({sql}) t ORDER BY 1", [claim_id])


def test_claim_lineage_of_equals_the_view(store, research):
    """The one-claim macro reads only what it follows; it must give exactly the view's rows, before and after
    reviews and for every kind of path (third-party evidence, dangling citation, conflict, no citation)."""
    claims = [r[0] for r in store.rows("SELECT claim_id FROM claims ORDER BY 1")]

    def check():
        for claim_id in [*claims, "cl_nope"]:
            view = lineage_rows(store, "SELECT * FROM claim_lineage WHERE claim_id = ?", claim_id)
            fast = lineage_rows(store, "SELECT * FROM claim_lineage_of(?)", claim_id)
            assert fast == view, claim_id

    check()
    review(store, "evidence", "ev_a1", "reject", "alice")
    review(store, "evidence", research.ids["genai_evidence"], "reject", "alice")
    review(store, "conflict", "conflict_1", "resolve", "bob")
    review(store, "claim", "cl_uncited", "approve", "bob")
    check()
