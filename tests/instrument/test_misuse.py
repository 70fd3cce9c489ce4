"""Instrumentation never breaks the agent: a misused helper returns normally, marks its span with
``otel_agent.misuse`` and logs one warning per call site (lenient, the default); strict mode raises.

Every case below is one kind of misuse. Lenient: the case runs three times from one call site, returns what
the helper documents, leaves the bad value out (or uses a generated id), and the three spans carry the message
while the log has one warning. Strict (``OTEL_AGENT_STRICT=1``, how the rest of the suite runs): it raises.
The data_quality view shows the marks after a real ingest (receiver over OTLP/gRPC, and the embedded exporter).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
from instrument_support import Spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_agent.instrument as oi
from otel_agent import DuckDBSpanExporter
from otel_agent.instrument import _misuse
from otel_agent.instrument import attributes as A
from tests.conftest import rows


@pytest.fixture
def lenient(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(_misuse.STRICT_ENV, raising=False)
    _misuse.forget_call_sites()
    yield
    _misuse.forget_call_sites()


def circular() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


def _call(fn: Callable[[oi.ProviderCall], object], **kw: Any) -> Callable[[], object]:
    def run() -> object:
        with oi.provider_call("openai", "gpt-4o", **kw) as call:
            return fn(call)

    return run


def _proxy(fn: Callable[[oi.ProxyRequest], object]) -> object:
    with oi.proxy_request("claude_code", "openai", "gpt-4o") as request:
        return fn(request)


def _accepted(carrier: object) -> Callable[[], object]:
    def run() -> object:
        with oi.accept(carrier) as work:  # type: ignore[arg-type]
            return work.operation_id

    return run


@dataclass(frozen=True)
class Case:
    name: str
    misuse: Callable[[], object]  # one call site: the misuse itself is on this line
    kind: str  # record kind of the span that must carry the mark
    fragment: str  # in the message
    error: type[oi.InstrumentError]  # what strict mode raises
    left_out: str | None = None  # an attribute the lenient helper leaves out
    check: Callable[[object, ReadableSpan], bool] = lambda result, span: True


CASES = [
    Case("empty text", lambda: oi.claim("", confidence="high"), "claim", "claim text", oi.InvalidValueError,
         A.CLAIM_TEXT, lambda cid, s: s.attributes[A.CLAIM_ID] == cid),
    Case("outside the vocabulary", lambda: oi.evidence_item("src_1", "x", confidence="sure"), "evidence_item",
         "confidence must be one of", oi.InvalidValueError, A.EVIDENCE_CONFIDENCE,
         lambda eid, s: s.attributes[A.EVIDENCE_EXCERPT] == "x"),
    Case("bad own id", lambda: oi.source("https://e.org", source_id=""), "source", "a generated id is used",
         oi.InvalidIdError, None, lambda sid, s: str(sid).startswith("src_") and s.attributes[A.SOURCE_ID] == sid),
    Case("bad reference", lambda: oi.citation("", "ev_1"), "citation", "claim_id must be", oi.InvalidIdError,
         A.CITATION_CLAIM_ID, lambda _, s: s.attributes[A.CITATION_EVIDENCE_ID] == "ev_1"),
    Case("not a sequence of ids", lambda: oi.conflict("d", claim_ids="c1", evidence_ids=["e1"]), "conflict",
         "claim_ids must be a sequence", oi.InvalidIdError, A.CONFLICT_CLAIM_IDS,
         lambda _, s: s.attributes[A.CONFLICT_EVIDENCE_IDS] == ("e1",)),
    Case("nothing in conflict", lambda: oi.conflict("d"), "conflict", "at least one claim id", oi.InvalidValueError),
    Case("metadata not JSON", lambda: oi.source("https://e.org", metadata=circular()), "source",
         "JSON-serialisable", oi.InvalidValueError, A.SOURCE_METADATA),
    Case("negative tokens", _call(lambda c: c.set_usage(-1, 5)), "provider_call", "input_tokens",
         oi.InvalidValueError, A.GEN_AI_USAGE_INPUT_TOKENS,
         lambda _, s: s.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS] == 5),
    Case("negative cost", _call(lambda c: c.set_cost(-0.5)), "provider_call", "cost must be", oi.InvalidValueError,
         A.COST_USD),
    Case("fallback to itself", _call(lambda c: c.fallback(to_model="gpt-4o")), "provider_call",
         "must change the provider or the model", oi.InvalidValueError, A.FALLBACK_COUNT,
         lambda _, s: not s.events),
    Case("unknown fallback status", _call(lambda c: c.fallback(to_provider="exa", status="ok")), "provider_call",
         "fallback status must be one of", oi.InvalidValueError, None,
         lambda _, s: A.FALLBACK_STATUS not in s.events[0].attributes),
    Case("proxy client empty", lambda: _enter_exit(oi.proxy_request("", "openai", "m", stream="yes")),
         "proxy_request", "client must be", oi.InvalidValueError, A.PROXY_CLIENT,
         lambda _, s: A.GEN_AI_REQUEST_STREAM not in s.attributes),
    Case("negative stream chunks", lambda: _proxy(lambda r: r.stream_chunks(-1)), "proxy_request", "stream chunks",
         oi.InvalidValueError, A.PROXY_STREAM_CHUNKS),
    Case("content not JSON", _call(lambda c: c.record_input(circular()), capture_content=True), "provider_call",
         "cannot be written as JSON", oi.InvalidValueError, A.GEN_AI_INPUT_MESSAGES, lambda r, s: r is False),
    Case("artifacts as one string", lambda: _enter_exit(oi.provider_call("openai", "m",
         input_artifacts="requirement.json")), "provider_call", "input_artifacts must be a sequence",
         oi.InvalidValueError, A.CALL_INPUT_ARTIFACTS),
    Case("negative token estimate", _call(lambda c: c.set_token_estimate(-5)), "provider_call", "token_estimate",
         oi.InvalidValueError, A.CALL_TOKEN_ESTIMATE),
    Case("empty prompt name", lambda: _enter_exit(oi.provider_call("openai", "m", prompt_name="",
         prompt_version="2")), "provider_call", "prompt_name", oi.InvalidValueError, A.GEN_AI_PROMPT_NAME,
         lambda _, s: s.attributes[A.GEN_AI_PROMPT_VERSION] == "2"),
    Case("unknown operation", lambda: oi.provider_call("openai", "m", operation="complete").__enter__().__exit__(
        None, None, None), "provider_call", "operation must be one of", oi.InvalidValueError,
         A.GEN_AI_OPERATION_NAME, lambda _, s: s.name == "unknown m"),
    Case("empty provider", lambda: _enter_exit(oi.provider_call("", "m")), "provider_call", "provider must be",
         oi.InvalidValueError, A.GEN_AI_PROVIDER_NAME),
    Case("empty tool name", lambda: _enter_exit(oi.tool_invocation("")), "tool_invocation", "tool name",
         oi.InvalidValueError, A.GEN_AI_TOOL_NAME, lambda _, s: s.name == "execute_tool unknown"),
    Case("non-number score", lambda: oi.verifier_result("v", passed=True, score="high"), "verifier_result",
         "score must be a number", oi.InvalidValueError, A.VERIFIER_SCORE,
         lambda r, s: r == "passed" and s.attributes[A.VERIFIER_OUTCOME] == "passed"),
    Case("empty guard name", lambda: oi.guard_result("", passed=False), "guard_result", "guard name",
         oi.InvalidValueError, A.GUARD_NAME, lambda r, s: r == "blocked"),
    Case("negative budget", lambda: _enter_exit(oi.flow_run("w", max_model_calls=-1)), "flow_run",
         "max_model_calls must be", oi.InvalidValueError, A.RUN_BUDGET_MAX_MODEL_CALLS),
    Case("empty workflow", lambda: _enter_exit(oi.flow_run("")), "flow_run", "workflow must be",
         oi.InvalidValueError, A.GEN_AI_WORKFLOW_NAME, lambda _, s: s.name == "invoke_workflow unknown"),
    Case("negative iteration", lambda: _enter_exit(oi.step("s", iteration=-1)), "step", "iteration must be",
         oi.InvalidValueError, A.ITERATION, lambda _, s: s.attributes[A.STEP_NAME] == "s"),
    Case("empty skill version", lambda: _enter_exit(oi.skill("planner", "")), "skill_invocation",
         "skill version", oi.InvalidValueError, A.SKILL_VERSION),
    Case("artifact content not text", lambda: oi.add_artifact_version("art_1", {"a": 1}), "artifact_version",
         "must be a string", oi.InvalidValueError, A.ARTIFACT_VERSION_CONTENT,
         lambda vid, s: s.attributes[A.ARTIFACT_VERSION_ID] == vid and A.ARTIFACT_VERSION_CONTENT_SHA256
         not in s.attributes),
    Case("version number zero", lambda: oi.add_artifact_version("art_1", "x", number=0), "artifact_version",
         "positive int", oi.InvalidValueError, A.ARTIFACT_VERSION_NUMBER),
    Case("empty artifact name", lambda: oi.create_artifact("").artifact_id, "artifact", "artifact name",
         oi.InvalidValueError, A.ARTIFACT_NAME),
    Case("empty model decision", lambda: oi.decision_record("d", model_decision="", effective_decision="x"),
         "decision", "model_decision", oi.InvalidValueError, A.DECISION_MISMATCH),
    Case("badcase without type", lambda: oi.badcase("parse"), "badcase", "needs error_type", oi.InvalidValueError,
         A.BADCASE_ERROR_TYPE, lambda _, s: s.attributes[A.BADCASE_STAGE] == "parse"),
    Case("unknown repair author", lambda: oi.repair("A", applied=True, computed_by="oracle"), "repair",
         "computed_by must be one of", oi.InvalidValueError, A.REPAIR_COMPUTED_BY,
         lambda _, s: s.attributes[A.REPAIR_ACTION] == "A" and s.attributes[A.REPAIR_APPLIED] is True),
    Case("repair applied not a bool", lambda: oi.repair("A", applied="yes"), "repair", "applied must be a bool",
         oi.InvalidValueError, A.REPAIR_APPLIED),
    Case("authorization without a scope", lambda: oi.authorization("", authorized_by="alice"), "authorization",
         "authorization scope", oi.InvalidValueError, A.AUTHORIZATION_SCOPE,
         lambda aid, s: s.attributes[A.AUTHORIZATION_BY] == "alice" and s.attributes[A.AUTHORIZATION_ID] == aid),
    Case("recovery without a limit", lambda: oi.recover("op_1", authority="policy:x", max_attempts=2,
         success_evidence="outcome_verified"), "recovery", "a recovery needs a cost limit", oi.InvalidValueError,
         A.RECOVERY_TIME_LIMIT_S, lambda rec, s: s.attributes[A.RECOVERY_MAX_ATTEMPTS] == 2),
    Case("recovery authority as prose", lambda: oi.recover("op_1", authority="the on-call engineer", max_attempts=1,
         time_limit_s=60, success_evidence="outcome_verified"), "recovery", "authority must be a bounded code",
         oi.ReceiptError, A.RECOVERY_AUTHORITY),
    Case("unknown memory type", lambda: oi.propose_memory("working", "c", scopes=[("run", "r")], rationale="y"),
         "memory_proposal", "memory_type", oi.InvalidValueError, A.MEMORY_PROPOSAL_MEMORY_TYPE),
    Case("unknown memory scope", lambda: oi.propose_memory("semantic", "c", scopes=[("team", "t"), ("run", "r")],
         rationale="y"), "memory_proposal", "scope type", oi.InvalidValueError, None,
         lambda _, s: s.attributes[A.MEMORY_PROPOSAL_SCOPES] == ("run:r",)),
    Case("impossible context budget", _call(lambda c: c.record_context(oi.assemble_context(
        [oi.ContextBlock("history", "a b c")], total_budget_tokens=100, response_reserve_tokens=200))),
         "provider_call", "response_reserve_tokens", oi.ContextBudgetError, None,
         lambda _, s: s.attributes[A.CONTEXT_RESPONSE_RESERVE_TOKENS] == 15),
    Case("unknown context block", lambda: _enter_exit(oi.provider_call("openai", "m", context_snapshot=
         oi.assemble_context([oi.ContextBlock("gossip", "x"), oi.ContextBlock("history", "y")]))),
         "provider_call", "unknown context block", oi.InvalidValueError, None,
         lambda _, s: s.attributes[A.CONTEXT_USED_TOKENS] == 1),
    Case("reason not a code", lambda: oi.delegate("report", reason="source was down!").carrier,
         "receipt_transition", "reason must be a bounded code", oi.ReceiptError, A.RECEIPT_REASON,
         lambda carrier, s: carrier[A.CARRIER_OPERATION_ID] == s.attributes[A.RECEIPT_OPERATION_ID]),  # type: ignore[index]
    Case("required code missing", lambda: oi.Receipt("op_1", "hof_1").failed(None), "receipt_transition",  # type: ignore[arg-type]
         "reason is required", oi.ReceiptError, A.RECEIPT_REASON,
         lambda _, s: s.attributes[A.RECEIPT_TRANSITION] == "outcome_failed"),
    Case("receipt id not opaque", lambda: oi.Receipt("op 1/..", "hof_1").progress(), "receipt_transition",
         "operation_id must be an opaque token", oi.ReceiptError, None,
         lambda _, s: s.attributes[A.RECEIPT_OPERATION_ID].startswith("op_")),
    Case("carrier not a dict", _accepted("traceparent=00-..."), "handoff_work", "a carrier is a dict",
         oi.CarrierError, None, lambda op, s: s.attributes[A.RECEIPT_OPERATION_ID] == op and not s.links),
    Case("carrier without ids", _accepted({"traceparent": "00-zz"}), "handoff_work", "carrier lacks a valid",
         oi.CarrierError, None, lambda op, s: str(op).startswith("op_")),
]  # fmt: skip


def _enter_exit(helper: oi.SpanHelper) -> None:
    with helper:
        pass


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_lenient_misuse_returns_marks_the_span_and_warns_once_per_call_site(
    case: Case, spans: Spans, lenient: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        results = [case.misuse() for _ in range(3)]  # three calls, one call site
    marked = [s for s in spans.kind(case.kind) if A.MISUSE in s.attributes]
    assert len(marked) == 3, [s.name for s in spans.all]
    for result, span in zip(results, marked, strict=True):
        assert any(case.fragment in m for m in span.attributes[A.MISUSE]), span.attributes[A.MISUSE]
        if case.left_out is not None:
            assert case.left_out not in span.attributes
        assert case.check(result, span), dict(span.attributes)
    warnings = [r for r in caplog.records if r.name == "otel_agent.instrument"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].levelno == logging.WARNING
    assert case.fragment in warnings[0].getMessage()
    assert f"{Path(__file__).name}:" in warnings[0].getMessage()  # names the agent's line, not ours


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_strict_mode_raises(case: Case, spans: Spans) -> None:
    # tests/conftest.py sets OTEL_AGENT_STRICT=1 for the whole suite
    with pytest.raises(case.error, match=None) as info:
        case.misuse()
    assert case.fragment.split(" (")[0] in str(info.value) or case.fragment == "a generated id is used"
    assert not [s for s in spans.all if A.MISUSE in s.attributes]


def test_configure_strict_overrides_the_environment(spans: Spans, lenient: None) -> None:
    oi.configure(strict=True)
    with pytest.raises(oi.InvalidValueError):
        oi.claim("c", confidence="sure")
    oi.configure(strict=False)
    cid = oi.claim("c", confidence="sure")
    assert spans.one("claim").attributes[A.CLAIM_ID] == cid


def test_each_call_site_warns_once_and_messages_are_bounded(
    spans: Spans, lenient: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        for _ in range(50):
            oi.claim("c", confidence="sure")
        oi.claim("c", confidence="sure")  # another call site
        oi.claim("c", confidence="x" * 10_000)
    assert len(caplog.records) == 3
    assert len(spans.kind("claim")) == 52
    (long,) = spans.all[-1].attributes[A.MISUSE]
    assert len(long) <= _misuse.MAX_MESSAGE_CHARS + len(" (left out)")
    assert long.endswith("… (left out)")


def test_a_handle_used_outside_its_block_does_nothing_and_warns(
    spans: Spans, lenient: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        with oi.provider_call("openai", "gpt-4o") as call:
            call.set_usage(1, 2)
        call.set_usage(100, 200)  # after the block
        assert call.retry() == 0
        with call:  # single-use: entering again is ignored
            pass
    (span,) = spans.kind("provider_call")
    assert span.attributes[A.GEN_AI_USAGE_INPUT_TOKENS] == 1
    assert A.MISUSE not in span.attributes
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3, messages
    assert all("not active" in m or "single-use" in m for m in messages), messages


def test_budget_enforcement_still_raises_in_lenient_mode(spans: Spans, lenient: None) -> None:
    with (
        oi.flow_run("w", max_tool_calls=0, enforce_budgets=True),
        pytest.raises(oi.BudgetExceededError),
        oi.tool_invocation("t"),
    ):
        pass
    assert spans.one("guard_result").attributes[A.GUARD_OUTCOME] == "blocked"


def misused_run(provider: TracerProvider) -> None:
    with oi.use_tracer_provider(provider), oi.flow_run("dq", run_id="run_dq"), oi.step("s") as st:
        oi.claim("", confidence="sure", claim_id="claim_dq")
        with oi.provider_call("openai", "gpt-4o") as call:
            call.set_usage(-3, 7)
        assert st.step_id


EXPECTED = [
    ("claim", "claim_dq", 1, "claim text must be a non-empty string, got '' (left out)"),
    ("claim", "claim_dq", 2, "confidence must be one of ['high', 'medium', 'low'], got 'sure' (left out)"),
    ("provider_call", None, 1, "input_tokens must be a non-negative int, got -3 (left out)"),
]


def test_data_quality_view_after_ingest_through_a_real_receiver(receiver: Any, lenient: None) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.grpc_address, insecure=True)))
    misused_run(provider)
    provider.shutdown()
    got = rows(
        receiver,
        "SELECT record_kind, record_id, problem_index, detail, run_id, issue, step_id IS NOT NULL FROM data_quality "
        "ORDER BY record_kind, problem_index",
    )
    assert got == [(*e, "run_dq", "instrumentation_misuse", True) for e in EXPECTED]


def test_data_quality_view_after_ingest_through_the_embedded_exporter(tmp_path: Path, lenient: None) -> None:
    path = tmp_path / "dq.duckdb"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(path)))
    misused_run(provider)
    misused_run(provider)  # the same misuse again: two marked spans per problem
    provider.shutdown()
    con = duckdb.connect(str(path), read_only=True)
    got = con.execute(
        "SELECT record_kind, record_id, problem_index, detail, count(*) FROM data_quality GROUP BY ALL "
        "ORDER BY record_kind, problem_index"
    ).fetchall()
    columns = [d[0] for d in con.execute("SELECT * FROM data_quality").description]
    con.close()
    assert got == [(*e, 2) for e in EXPECTED]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "views-runs.md").read_text(encoding="utf-8")
    section = doc[doc.index("### `data_quality`") :]
    assert [c for c in columns if f"`{c}`" not in section] == []
    assert "`190_data_quality.sql`" in doc


def test_the_call_site_is_the_agents_line_through_decorators_and_exit_stacks(
    spans: Spans, lenient: None, caplog: pytest.LogCaptureFixture
) -> None:
    import contextlib

    @oi.step("decorated", iteration=-1)
    def work() -> None:
        pass

    with caplog.at_level(logging.WARNING, logger="otel_agent.instrument"):
        work()
        with contextlib.ExitStack() as stack:
            stack.enter_context(oi.tool_invocation(""))
    lines = [r.getMessage().split(": otel_agent.instrument misuse")[0] for r in caplog.records]
    here = Path(__file__).resolve()
    assert [line.rsplit(":", 1)[0] for line in lines] == [str(here)] * 2, lines
    source = here.read_text().splitlines()
    assert '@oi.step("decorated", iteration=-1)' in source[int(lines[0].rsplit(":", 1)[1]) - 1]
    assert "stack.enter_context(oi.tool_invocation" in source[int(lines[1].rsplit(":", 1)[1]) - 1]
    assert [s.attributes[A.MISUSE] for s in spans.all if A.MISUSE in s.attributes] == [
        ("iteration must be a non-negative int, got -1 (left out)",),  # the decorator's template found it
        ("tool name must be a non-empty string, got '' (left out)",),
    ]


def test_a_rejected_receipt_reason_is_not_copied_into_the_mark(spans: Spans, lenient: None) -> None:
    oi.Receipt("op_1", "hof_1").failed("the customer's card 4111 1111 1111 1111 was declined")
    (mark,) = spans.one("receipt_transition").attributes[A.MISUSE]
    assert "4111" not in mark
    assert "got a string of 52 characters" in mark
