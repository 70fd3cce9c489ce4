"""Handoff receipts (seed 002): did responsibility move, and was the promised result observed?

Every transition — delegated, accepted, progress, waiting, completed, outcome_verified, outcome_failed — is
its own zero-length span ``otel_agent.receipt.<transition>``, ended at once, so it reaches the backend while
the work it describes is still running, over a plain traces pipeline. Each carries the operation id (the
durable identity of the work), the handoff id (one per delegation attempt), the transition and, when known,
the expected artifact.

``delegate()`` returns a ``Delegation`` whose ``carrier`` is a dict of strings holding only the W3C
``traceparent`` / ``tracestate`` of the *delegated* transition span plus the two opaque ids — no prompts,
paths, credentials or payloads, and nothing in baggage (the W3C trace-context propagator is used directly,
whatever the global propagator is). The expected artifact stays out of the carrier: it is recorded on the
delegated span, and the worker names it again (``accept(..., expected_artifact=)``) from its own durable task
description.

``accept(carrier)`` starts the worker's span (``otel_agent.handoff.work``, CONSUMER, a new trace unless the
worker is already inside one) with a span link to the delegating span, and records ``accepted`` (also
linked).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Link, Span, SpanContext, SpanKind, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from . import _tracer
from . import attributes as A
from ._ids import GENERATED, OPAQUE, new_id
from ._misuse import Problems, report
from ._scope import AttributeValue, Scope, SpanHelper, base_attributes, current_scope, emit_record, put, put_misuse
from .errors import CarrierError, ReceiptError

TRANSITIONS = (
    "delegated",
    "accepted",
    "progress",
    "waiting",
    "completed",
    "outcome_verified",
    "outcome_failed",
)
CARRIER_KEYS = frozenset({"traceparent", "tracestate", A.CARRIER_OPERATION_ID, A.CARRIER_HANDOFF_ID})
LINK_TYPE_HANDOFF = "handoff"

_PROPAGATOR = TraceContextTextMapPropagator()
# Reasons and dependencies are bounded operational codes ("source_unreachable", "approval:legal"), not prose.
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}")


def _shape(value: object) -> str:
    """A rejected receipt value, described without its content: codes and ids exist so that prose, paths and
    payloads stay off receipts (and carriers), and the misuse message must not carry them either."""
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return f"a {type(value).__name__}"


def _code(value: str | None, what: str, problems: Problems, *, required: bool = False) -> str | None:
    if value is None:
        if required:
            report(ReceiptError(f"{what} is required"), problems, "recorded without")
        return None
    if not isinstance(value, str) or _CODE.fullmatch(value) is None:
        report(
            ReceiptError(f"{what} must be a bounded code ([A-Za-z0-9][A-Za-z0-9_.:-]{{0,63}}), got {_shape(value)}"),
            problems,
        )
        return None
    return value


def _opaque(value: str, what: str, problems: Problems | None, instead: str = "left out") -> str | None:
    if isinstance(value, str) and OPAQUE.fullmatch(value) is not None:
        return value
    report(
        ReceiptError(f"{what} must be an opaque token ([A-Za-z0-9][A-Za-z0-9_.:-]{{0,127}}), got {_shape(value)}"),
        problems,
        instead,
    )
    return None


def _opaque_or_new(value: str | None, prefix: str, what: str, problems: Problems | None) -> str:
    if value is None:
        return new_id(prefix)
    return _opaque(value, what, problems, GENERATED) or new_id(prefix)


class _Transitions:
    """Transition recorders shared by receipts, delegations and acceptances (needs the three ids)."""

    __slots__ = ()
    operation_id: str
    handoff_id: str
    expected_artifact: str | None
    _receipt_tracer: trace.Tracer | None

    def _emit(
        self,
        transition: str,
        *,
        reason: str | None = None,
        waiting_for: str | None = None,
        artifact_ref: str | None = None,
        target: str | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        links: Sequence[Link] | None = None,
        problems: Problems | None = None,
    ) -> Span:
        tracer = self._receipt_tracer or _tracer.current_tracer()
        if tracer is None:
            return INVALID_SPAN
        attrs = base_attributes(current_scope(), A.KIND_RECEIPT)
        attrs[A.RECEIPT_OPERATION_ID] = self.operation_id
        attrs[A.RECEIPT_HANDOFF_ID] = self.handoff_id
        attrs[A.RECEIPT_TRANSITION] = transition
        put(attrs, A.RECEIPT_EXPECTED_ARTIFACT, self.expected_artifact)
        put(attrs, A.RECEIPT_REASON, reason)
        put(attrs, A.RECEIPT_WAITING_FOR, waiting_for)
        put(attrs, A.RECEIPT_ARTIFACT_REF, artifact_ref)
        put(attrs, A.RECEIPT_TARGET, target)
        # the handle's own misuse (bad ids) marks every transition it records, this call's only this one
        put_misuse(attrs, [*(self._misuse or ()), *(problems or ())])
        return emit_record(f"otel_agent.receipt.{transition}", attrs, kind=kind, links=links, tracer=tracer)

    def progress(self, reason: str | None = None) -> None:
        """Useful progress was made (optionally: which, as a code such as ``sources_checked``)."""
        p: Problems = []
        self._emit("progress", reason=_code(reason, "reason", p), problems=p)

    def waiting(self, waiting_for: str, reason: str | None = None) -> None:
        """Legitimately waiting on a named dependency or approval (e.g. ``approval:fallback_source``)."""
        p: Problems = []
        self._emit(
            "waiting",
            waiting_for=_code(waiting_for, "waiting_for", p, required=True),
            reason=_code(reason, "reason", p),
            problems=p,
        )

    def completed(self, artifact_ref: str | None = None, reason: str | None = None) -> None:
        """The work finished (not yet verified); ``artifact_ref`` names what was produced (an opaque id)."""
        p: Problems = []
        ref = None if artifact_ref is None else _opaque(artifact_ref, "artifact_ref", p)
        self._emit("completed", artifact_ref=ref, reason=_code(reason, "reason", p), problems=p)

    def verified(self, reason: str | None = None) -> None:
        """The expected artifact was observed and verified."""
        p: Problems = []
        self._emit("outcome_verified", reason=_code(reason, "reason", p), problems=p)

    def failed(self, reason: str) -> None:
        """Verification failed or the artifact is missing; ``reason`` is a required bounded code."""
        p: Problems = []
        self._emit("outcome_failed", reason=_code(reason, "reason", p, required=True), problems=p)


class Receipt(_Transitions):
    """Record transitions of a known handoff (ids from durable storage, or ``receipt_from_carrier``)."""

    __slots__ = ("_misuse", "_receipt_tracer", "expected_artifact", "handoff_id", "operation_id")

    def __init__(self, operation_id: str, handoff_id: str, expected_artifact: str | None = None) -> None:
        problems: Problems = []
        self.operation_id = _opaque_or_new(operation_id, "op", "operation_id", problems)
        self.handoff_id = _opaque_or_new(handoff_id, "hof", "handoff_id", problems)
        self.expected_artifact = (
            None if expected_artifact is None else _opaque(expected_artifact, "expected_artifact", problems)
        )
        self._receipt_tracer = _tracer.current_tracer()
        self._misuse: Problems | None = problems or None


class Delegation(Receipt):
    """A delegated handoff attempt: ``carrier`` goes to the worker; the delegator may record the outcome."""

    __slots__ = ("carrier", "target")

    def __init__(self, operation_id: str, handoff_id: str, expected_artifact: str, target: str | None) -> None:
        super().__init__(operation_id, handoff_id, expected_artifact)
        self.target = target
        self.carrier: dict[str, str] = {}

    def retry(
        self, *, target: str | None = None, reason: str | None = None, handoff_id: str | None = None
    ) -> Delegation:
        """Delegate the same operation again: a new handoff id; the old attempt's history stays as it was.

        ``handoff_id`` names the new attempt (an opaque id, generated when absent); it must differ from this
        attempt's.
        """
        if handoff_id is not None and handoff_id == self.handoff_id:
            report(ReceiptError(f"a retry needs a new handoff id, got this attempt's {handoff_id!r}"), None, GENERATED)
            handoff_id = None
        return delegate(
            self.expected_artifact,  # type: ignore[arg-type]
            operation_id=self.operation_id,
            target=target if target is not None else self.target,
            reason=reason,
            handoff_id=handoff_id,
        )


def delegate(
    expected_artifact: str,
    *,
    operation_id: str | None = None,
    target: str | None = None,
    reason: str | None = None,
    tracer_provider: TracerProvider | None = None,
    handoff_id: str | None = None,
) -> Delegation:
    """Record a *delegated* transition (PRODUCER span, child of the current span) and return the delegation.

    ``operation_id`` identifies the work across retries (generated when absent); ``handoff_id`` identifies
    this delegation attempt (generated when absent — pass one only when it is new for every attempt, e.g. from
    durable storage or a fixed script). Both are opaque ids. ``expected_artifact`` is an opaque name of what
    will close the receipt (``fact_check_report``, an artifact id).
    """
    token = _tracer.bind(tracer_provider)
    try:
        p: Problems = []
        op = _opaque_or_new(operation_id, "op", "operation_id", p)
        hid = _opaque_or_new(handoff_id, "hof", "handoff_id", p)
        d = Delegation(op, hid, expected_artifact, _target(target, p))
        reason = _code(reason, "reason", p)
        span = d._emit("delegated", reason=reason, target=d.target, kind=SpanKind.PRODUCER, problems=p)
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
        carrier[A.CARRIER_OPERATION_ID] = d.operation_id
        carrier[A.CARRIER_HANDOFF_ID] = d.handoff_id
        d.carrier = carrier
        return d
    finally:
        _tracer.unbind(token)


def _target(value: str | None, problems: Problems) -> str | None:
    if value is not None and (not isinstance(value, str) or not value or len(value) > 128):
        report(ReceiptError(f"target must be a non-empty string of at most 128 characters, got {value!r}"), problems)
        return None
    return value


def _carrier_id(carrier: Mapping[str, str], key: str, prefix: str, problems: Problems | None) -> str:
    value = carrier.get(key)
    if isinstance(value, str) and OPAQUE.fullmatch(value) is not None:
        return value
    report(CarrierError(f"carrier lacks a valid {key}: got {_shape(value)}"), problems, GENERATED)
    return new_id(prefix)


def parse_carrier(carrier: Mapping[str, str], problems: Problems | None = None) -> tuple[str, str, SpanContext | None]:
    """Validate a carrier; returns (operation id, handoff id, delegating span context or None).

    Lenient mode (see docs/semconv.md): what is wrong is reported; a missing or invalid id is replaced by a
    generated one, a malformed ``traceparent`` gives no span context, entries that are not strings are ignored.
    """
    if not isinstance(carrier, Mapping):
        report(CarrierError(f"a carrier is a dict of strings, got {type(carrier).__name__}"), problems, GENERATED)
        return new_id("op"), new_id("hof"), None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in carrier.items()):
        report(CarrierError("a carrier holds only string keys and string values"), problems, "those are ignored")
        carrier = {k: v for k, v in carrier.items() if isinstance(k, str) and isinstance(v, str)}
    op = _carrier_id(carrier, A.CARRIER_OPERATION_ID, "op", problems)
    hid = _carrier_id(carrier, A.CARRIER_HANDOFF_ID, "hof", problems)
    if "traceparent" not in carrier:
        return op, hid, None  # the delegator had no tracing: accept works, without a link
    ctx = trace.get_current_span(_PROPAGATOR.extract(dict(carrier))).get_span_context()
    if not ctx.is_valid:
        report(CarrierError(f"carrier traceparent is malformed: {carrier['traceparent']!r}"), problems, "no link")
        return op, hid, None
    return op, hid, ctx


def receipt_from_carrier(carrier: Mapping[str, str], *, expected_artifact: str | None = None) -> Receipt:
    """A receipt for the handoff in ``carrier`` without accepting it (e.g. a separate verifier)."""
    problems: Problems = []
    op, hid, _ = parse_carrier(carrier, problems)
    receipt = Receipt(op, hid, expected_artifact)
    if problems:
        receipt._misuse = [*problems, *(receipt._misuse or ())]
    return receipt


class Acceptance(_Transitions, SpanHelper):
    """The worker's side: a CONSUMER span linked to the delegating span; records *accepted* on entry."""

    __slots__ = ("_link", "_receipt_tracer", "expected_artifact", "handoff_id", "operation_id")  # + SpanHelper's

    def __init__(
        self,
        carrier: Mapping[str, str],
        *,
        expected_artifact: str | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        SpanHelper.__init__(self, tracer_provider)
        problems = self._problems()
        op, hid, remote = parse_carrier(carrier, problems)
        self.operation_id, self.handoff_id = op, hid
        self.expected_artifact = (
            None if expected_artifact is None else _opaque(expected_artifact, "expected_artifact", problems)
        )
        self._receipt_tracer: trace.Tracer | None = None
        attrs: dict[str, AttributeValue] = {
            A.LINK_TYPE: LINK_TYPE_HANDOFF,
            A.RECEIPT_OPERATION_ID: op,
            A.RECEIPT_HANDOFF_ID: hid,
        }
        self._link = None if remote is None else Link(remote, attrs)

    def _prepare(self, parent: Scope) -> None:
        self._receipt_tracer = _tracer.current_tracer()  # transitions after the block still use this provider

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs = base_attributes(parent, A.KIND_HANDOFF_WORK)
        attrs[A.RECEIPT_OPERATION_ID] = self.operation_id
        attrs[A.RECEIPT_HANDOFF_ID] = self.handoff_id
        put(attrs, A.RECEIPT_EXPECTED_ARTIFACT, self.expected_artifact)
        links = None if self._link is None else [self._link]
        return "otel_agent.handoff.work", SpanKind.CONSUMER, attrs, links

    def _after_start(self, span: Span) -> None:
        self._emit("accepted", links=None if self._link is None else [self._link])

    @property
    def linked_span_context(self) -> SpanContext | None:
        """The delegating span's context taken from the carrier (None when the delegator had no tracing)."""
        return None if self._link is None else self._link.context


accept = Acceptance
