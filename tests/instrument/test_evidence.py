"""Evidence records and artifacts: one zero-length span per record, ids, vocabulary, lineage by id."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from instrument_support import Spans, parent_id, span_id
from opentelemetry.trace import SpanKind

import otel_agent.instrument as oi
from otel_agent.instrument import attributes as A


def test_lineage_records(spans: Spans) -> None:
    with oi.flow_run("w", run_id="r"), oi.step("search", step_id="s_search") as st:
        src = oi.source(
            "https://langchain.com/langgraph",
            title="LangGraph",
            provider="tavily",
            retrieved_at=datetime(2026, 8, 20, 10, 0, tzinfo=UTC),
            metadata={"author": "LangChain", "year": 2026},
        )
        ev = oi.evidence_item(src, "LangGraph adoption grew 300%", confidence="high", evidence_id="ev_123")
        cl = oi.claim("Graph orchestration is mainstream", confidence="high", artifact_version_id="artv_1")
        cit = oi.citation(cl, ev, citation_text="[1]")
        xc = oi.conflict("figures disagree", evidence_ids=[ev, "ev_124"], severity="high")
    assert ev == "ev_123"
    assert src.startswith("src_")
    assert cl.startswith("claim_")
    assert cit.startswith("cit_")

    records = [spans.one(k) for k in ("source", "evidence_item", "claim", "citation", "conflict")]
    step_span = spans.one("step")
    for r in records:
        assert r.name == f"otel_agent.{r.attributes[A.RECORD_KIND]}"
        assert r.kind is SpanKind.INTERNAL
        assert r.start_time <= r.end_time
        assert parent_id(r) == span_id(step_span)
        assert r.end_time < step_span.end_time  # exported before the step ended
        assert r.attributes[A.RUN_ID] == "r"
        assert r.attributes[A.STEP_ID] == st.step_id
    s, e, c, ci, x = (dict(r.attributes) for r in records)
    assert s[A.SOURCE_ID] == src
    assert s[A.SOURCE_URL] == "https://langchain.com/langgraph"
    assert s[A.SOURCE_TITLE] == "LangGraph"
    assert s[A.SOURCE_PROVIDER] == "tavily"
    assert s[A.SOURCE_RETRIEVED_AT] == "2026-08-20T10:00:00.000+00:00"
    assert json.loads(s[A.SOURCE_METADATA]) == {"author": "LangChain", "year": 2026}
    assert (e[A.EVIDENCE_ID], e[A.EVIDENCE_SOURCE_ID], e[A.EVIDENCE_CONFIDENCE]) == ("ev_123", src, "high")
    assert e[A.EVIDENCE_EXCERPT] == "LangGraph adoption grew 300%"
    assert e[A.EVIDENCE_SUPPORTS_STEP] == "search"  # defaults to the current step's name
    assert (c[A.CLAIM_ID], c[A.CLAIM_CONFIDENCE], c[A.CLAIM_ARTIFACT_VERSION_ID]) == (cl, "high", "artv_1")
    assert c[A.CLAIM_TEXT] == "Graph orchestration is mainstream"
    assert (ci[A.CITATION_CLAIM_ID], ci[A.CITATION_EVIDENCE_ID], ci[A.CITATION_STATUS]) == (cl, ev, "valid")
    assert ci[A.CITATION_TEXT] == "[1]"
    assert x[A.CONFLICT_ID] == xc
    assert x[A.CONFLICT_EVIDENCE_IDS] == ("ev_123", "ev_124")
    assert A.CONFLICT_CLAIM_IDS not in x
    assert x[A.CONFLICT_SEVERITY] == "high"
    assert x[A.CONFLICT_DESCRIPTION] == "figures disagree"


def test_records_outside_a_run_have_no_run_or_step(spans: Spans) -> None:
    oi.source("https://x.org", source_id="src_x", retrieved_at="2026-01-01T00:00:00Z")
    s = spans.one("source")
    assert A.RUN_ID not in s.attributes
    assert A.STEP_ID not in s.attributes
    assert s.parent is None
    assert s.attributes[A.SOURCE_RETRIEVED_AT] == "2026-01-01T00:00:00Z"


def test_vocabularies_are_enforced() -> None:
    with pytest.raises(oi.InvalidValueError, match="confidence"):
        oi.evidence_item("src", "x", confidence="sure")
    with pytest.raises(oi.InvalidValueError):
        oi.citation("c", "e", status="maybe")
    with pytest.raises(oi.InvalidValueError):
        oi.conflict("x", claim_ids=["c"], severity="critical")
    with pytest.raises(oi.InvalidValueError):
        oi.conflict("x")
    with pytest.raises(oi.InvalidIdError):
        oi.conflict("x", claim_ids="claim_1")  # a bare string is not a list of ids
    with pytest.raises(oi.InvalidIdError):
        oi.citation("", "e")
    with pytest.raises(oi.InvalidValueError):
        oi.source("")


def test_generated_ids_are_unique(spans: Spans) -> None:
    ids = {oi.claim(f"c{i}", confidence="low") for i in range(200)}
    assert len(ids) == 200
    assert {s.attributes[A.CLAIM_ID] for s in spans.kind("claim")} == ids


def test_artifact_versions_are_added_never_replaced(spans: Spans) -> None:
    with oi.flow_run("w", run_id="r"):
        with oi.step("synthesize") as st:
            art = oi.create_artifact("Memory systems", artifact_type="markdown_report")
            v1 = art.add_version("# Report v1", evidence_ids=["ev_1", "ev_2"])
            v2 = art.add_version("# Report v2", evidence_ids=["ev_1", "ev_2", "ev_3"])
        manual = oi.add_artifact_version(art.artifact_id, "# edited", source_step_id="manual", number=3)
    assert art.versions == [v1, v2]
    assert art.latest_version_id == v2
    assert art.run_id == "r"
    a = spans.one("artifact")
    assert a.name == "otel_agent.artifact"
    assert (a.attributes[A.ARTIFACT_ID], a.attributes[A.ARTIFACT_TYPE]) == (
        art.artifact_id,
        "markdown_report",
    )
    assert a.attributes[A.ARTIFACT_NAME] == "Memory systems"
    assert a.attributes[A.RUN_ID] == "r"
    first, second, third = (dict(s.attributes) for s in spans.kind("artifact_version"))
    assert (first[A.ARTIFACT_VERSION_ID], first[A.ARTIFACT_VERSION_NUMBER]) == (v1, 1)
    assert A.ARTIFACT_VERSION_PREVIOUS_ID not in first
    assert (second[A.ARTIFACT_VERSION_NUMBER], second[A.ARTIFACT_VERSION_PREVIOUS_ID]) == (2, v1)
    assert second[A.ARTIFACT_VERSION_CONTENT] == "# Report v2"
    assert second[A.ARTIFACT_VERSION_CONTENT_SHA256] == hashlib.sha256(b"# Report v2").hexdigest()
    assert second[A.ARTIFACT_VERSION_EVIDENCE_IDS] == ("ev_1", "ev_2", "ev_3")
    assert second[A.ARTIFACT_VERSION_SOURCE_STEP_ID] == st.step_id
    assert all(v[A.ARTIFACT_ID] == art.artifact_id for v in (first, second, third))
    assert third[A.ARTIFACT_VERSION_ID] == manual
    assert third[A.ARTIFACT_VERSION_SOURCE_STEP_ID] == "manual"
    assert third[A.ARTIFACT_VERSION_NUMBER] == 3
    assert A.ARTIFACT_VERSION_EVIDENCE_IDS not in third


def test_artifact_validation() -> None:
    with pytest.raises(oi.InvalidValueError):
        oi.create_artifact("")
    with pytest.raises(oi.InvalidValueError):
        oi.add_artifact_version("art_1", {"not": "a string"})  # type: ignore[arg-type]
    with pytest.raises(oi.InvalidValueError):
        oi.add_artifact_version("art_1", "x", number=0)
