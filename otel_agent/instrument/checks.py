"""Guard results (``apply_guardrail {name}``) and verifier results (``verify {name}``).

Both are INTERNAL spans. A guard that blocks did its job, so the span status stays UNSET: a block is an
outcome (``otel_agent.guard.outcome = blocked``), not an error. Use them as context managers when the check
takes time (e.g. a verifier that calls a model), or the one-shot ``guard_result`` / ``verifier_result``
functions."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.trace import Link, Span, SpanKind

from . import attributes as A
from ._misuse import Problems
from ._scope import (
    UNKNOWN,
    AttributeValue,
    Scope,
    SpanHelper,
    base_attributes,
    current_scope,
    emit_record,
    put,
    put_misuse,
)
from ._tracer import current_tracer
from ._validate import number, text
from .binding import ActionBinding, put_binding

GUARD_OUTCOMES = ("passed", "blocked")
VERIFIER_OUTCOMES = ("passed", "failed")


def _score(score: float | None, problems: Problems) -> float | None:
    return None if score is None else number(score, "score", problems)


def _name(value: object, what: str, helper: SpanHelper) -> str | None:
    if isinstance(value, str) and value:
        return value
    return text(value, what, helper._problems())


class Guard(SpanHelper):
    """A guard check; call ``passed()`` or ``blocked(reason)`` before the block ends (else no outcome)."""

    __slots__ = ("name", "outcome", "reason", "stage", "target_id")

    def __init__(self, name: str, *, stage: str | None = None, target_id: str | None = None) -> None:
        super().__init__()
        self.name = _name(name, "guard name", self)
        self.stage = stage
        self.target_id = target_id
        self.outcome: str | None = None
        self.reason: str | None = None

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        return f"{A.OP_APPLY_GUARDRAIL} {self.name or UNKNOWN}", SpanKind.INTERNAL, _guard_attrs(parent, self), None

    def passed(self, reason: str | None = None) -> None:
        self._set("passed", reason)

    def blocked(self, reason: str | None = None) -> None:
        self._set("blocked", reason)

    def _set(self, outcome: str, reason: str | None) -> None:
        if self._require_active():
            self.outcome, self.reason = outcome, reason

    def _close(self, span: Span) -> None:
        if self.outcome is not None:
            span.set_attributes(_guard_outcome({}, self))


class Verifier(SpanHelper):
    """A verification of some output; call ``set_result(passed, score=, reason=)`` before the block ends."""

    __slots__ = ("name", "outcome", "reason", "score", "target_id")

    def __init__(self, name: str, *, target_id: str | None = None) -> None:
        super().__init__()
        self.name = _name(name, "verifier name", self)
        self.target_id = target_id
        self.outcome: str | None = None
        self.score: float | None = None
        self.reason: str | None = None

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        return f"verify {self.name or UNKNOWN}", SpanKind.INTERNAL, _verifier_attrs(parent, self), None

    def set_result(self, passed: bool, *, score: float | None = None, reason: str | None = None) -> None:
        if not self._require_active():
            return
        self.outcome, self.reason = ("passed" if passed else "failed"), reason
        if score is not None:
            self.score = _score(score, self._problems())
            self._sync_misuse()

    def _close(self, span: Span) -> None:
        if self.outcome is not None:
            span.set_attributes(_verifier_outcome({}, self))


def _guard_attrs(scope: Scope, g: Guard) -> dict[str, AttributeValue]:
    attrs: dict[str, AttributeValue] = {A.GEN_AI_OPERATION_NAME: A.OP_APPLY_GUARDRAIL}
    attrs.update(base_attributes(scope, A.KIND_GUARD))
    put(attrs, A.GUARD_NAME, g.name)
    put(attrs, A.GUARD_STAGE, g.stage)
    put(attrs, A.GUARD_TARGET_ID, g.target_id)
    return attrs


def _guard_outcome(attrs: dict[str, AttributeValue], g: Guard) -> dict[str, AttributeValue]:
    put(attrs, A.GUARD_OUTCOME, g.outcome)
    put(attrs, A.GUARD_REASON, g.reason)
    return attrs


def _verifier_attrs(scope: Scope, v: Verifier) -> dict[str, AttributeValue]:
    attrs = base_attributes(scope, A.KIND_VERIFIER)
    put(attrs, A.VERIFIER_NAME, v.name)
    put(attrs, A.VERIFIER_TARGET_ID, v.target_id)
    return attrs


def _verifier_outcome(attrs: dict[str, AttributeValue], v: Verifier) -> dict[str, AttributeValue]:
    put(attrs, A.VERIFIER_OUTCOME, v.outcome)
    put(attrs, A.VERIFIER_SCORE, v.score)
    put(attrs, A.VERIFIER_REASON, v.reason)
    return attrs


guard = Guard
verifier = Verifier


def guard_result(
    name: str,
    *,
    passed: bool,
    reason: str | None = None,
    stage: str | None = None,
    target_id: str | None = None,
) -> str:
    """Record a finished guard check at once (zero-length span); returns ``passed`` or ``blocked``."""
    g = Guard(name, stage=stage, target_id=target_id)
    g.outcome, g.reason = ("passed" if passed else "blocked"), reason
    tracer = current_tracer()
    if tracer is not None:
        attrs = _guard_outcome(_guard_attrs(current_scope(), g), g)
        put_misuse(attrs, g._misuse)
        emit_record(f"{A.OP_APPLY_GUARDRAIL} {g.name or UNKNOWN}", attrs, tracer=tracer)
    return g.outcome


def verifier_result(
    name: str,
    *,
    passed: bool,
    score: float | None = None,
    reason: str | None = None,
    target_id: str | None = None,
    action: ActionBinding | None = None,
) -> str:
    """Record a finished verification at once (zero-length span); returns ``passed`` or ``failed``.
    ``action``: the action (run, config hash, variant) whose output was verified."""
    v = Verifier(name, target_id=target_id)
    v.outcome, v.reason = ("passed" if passed else "failed"), reason
    if score is not None:
        v.score = _score(score, v._problems())
    tracer = current_tracer()
    if tracer is not None:
        attrs = _verifier_outcome(_verifier_attrs(current_scope(), v), v)
        put_binding(attrs, action, v._problems())
        put_misuse(attrs, v._misuse)
        emit_record(f"verify {v.name or UNKNOWN}", attrs, tracer=tracer)
    return v.outcome  # type: ignore[return-value]
