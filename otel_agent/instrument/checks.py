"""Guard results (``apply_guardrail {name}``) and verifier results (``verify {name}``).

Both are INTERNAL spans. A guard that blocks did its job, so the span status stays UNSET: a block is an
outcome (``otel_agent.guard.outcome = blocked``), not an error. Use them as context managers when the check
takes time (e.g. a verifier that calls a model), or the one-shot ``guard_result`` / ``verifier_result``
functions."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.trace import Link, Span, SpanKind

from . import attributes as A
from ._scope import AttributeValue, Scope, SpanHelper, base_attributes, put
from .errors import InvalidValueError

GUARD_OUTCOMES = ("passed", "blocked")
VERIFIER_OUTCOMES = ("passed", "failed")


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidValueError(f"{what} must be a non-empty string")
    return value


class Guard(SpanHelper):
    """A guard check; call ``passed()`` or ``blocked(reason)`` before the block ends (else no outcome)."""

    __slots__ = ("name", "stage", "target_id", "outcome", "reason")
    _record_kind = A.KIND_GUARD

    def __init__(self, name: str, *, stage: str | None = None, target_id: str | None = None) -> None:
        super().__init__()
        self.name = _name(name, "guard name")
        self.stage = stage
        self.target_id = target_id
        self.outcome: str | None = None
        self.reason: str | None = None

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs: dict[str, AttributeValue] = {A.GEN_AI_OPERATION_NAME: A.OP_APPLY_GUARDRAIL}
        attrs.update(base_attributes(parent, A.KIND_GUARD))
        attrs[A.GUARD_NAME] = self.name
        put(attrs, A.GUARD_STAGE, self.stage)
        put(attrs, A.GUARD_TARGET_ID, self.target_id)
        return f"{A.OP_APPLY_GUARDRAIL} {self.name}", SpanKind.INTERNAL, attrs, None

    def passed(self, reason: str | None = None) -> None:
        self._set("passed", reason)

    def blocked(self, reason: str | None = None) -> None:
        self._set("blocked", reason)

    def _set(self, outcome: str, reason: str | None) -> None:
        self._require_active()
        self.outcome, self.reason = outcome, reason

    def _close(self, span: Span | None) -> None:
        if span is None or self.outcome is None:
            return
        span.set_attribute(A.GUARD_OUTCOME, self.outcome)
        if self.reason is not None:
            span.set_attribute(A.GUARD_REASON, self.reason)


class Verifier(SpanHelper):
    """A verification of some output; call ``set_result(passed, score=, reason=)`` before the block ends."""

    __slots__ = ("name", "target_id", "outcome", "score", "reason")
    _record_kind = A.KIND_VERIFIER

    def __init__(self, name: str, *, target_id: str | None = None) -> None:
        super().__init__()
        self.name = _name(name, "verifier name")
        self.target_id = target_id
        self.outcome: str | None = None
        self.score: float | None = None
        self.reason: str | None = None

    def _open(self, parent: Scope) -> tuple[str, SpanKind, dict[str, AttributeValue], Sequence[Link] | None]:
        attrs = base_attributes(parent, A.KIND_VERIFIER)
        attrs[A.VERIFIER_NAME] = self.name
        put(attrs, A.VERIFIER_TARGET_ID, self.target_id)
        return f"verify {self.name}", SpanKind.INTERNAL, attrs, None

    def set_result(self, passed: bool, *, score: float | None = None, reason: str | None = None) -> None:
        self._require_active()
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise InvalidValueError(f"score must be a number, got {score!r}")
        self.outcome = "passed" if passed else "failed"
        self.score = None if score is None else float(score)
        self.reason = reason

    def _close(self, span: Span | None) -> None:
        if span is None or self.outcome is None:
            return
        span.set_attribute(A.VERIFIER_OUTCOME, self.outcome)
        if self.score is not None:
            span.set_attribute(A.VERIFIER_SCORE, self.score)
        if self.reason is not None:
            span.set_attribute(A.VERIFIER_REASON, self.reason)


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
    """Record a finished guard check at once; returns the outcome (``passed`` / ``blocked``)."""
    with Guard(name, stage=stage, target_id=target_id) as g:
        g.passed(reason) if passed else g.blocked(reason)
    return g.outcome  # type: ignore[return-value]


def verifier_result(
    name: str,
    *,
    passed: bool,
    score: float | None = None,
    reason: str | None = None,
    target_id: str | None = None,
) -> str:
    """Record a finished verification at once; returns the outcome (``passed`` / ``failed``)."""
    with Verifier(name, target_id=target_id) as v:
        v.set_result(passed, score=score, reason=reason)
    return v.outcome  # type: ignore[return-value]
