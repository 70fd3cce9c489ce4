"""Recovery records (seed 002): a bounded response to a handoff in trouble, recorded before it acts.

Seed 002: "for each automatic response, record the authority, the maximum attempts, the cost or time limit,
and the evidence that will mark the recovery successful" — a retry command that exited zero is not success
when the promise was a published report. ``recover()`` records the plan (``started``: authority, mode, limits,
success evidence, for the operation — and the attempt — it responds to); the handle then records each
``attempt`` (its number, the new handoff id, its cost) and how it ended (``succeeded`` with the evidence seen,
or ``failed``). Each is a zero-length span ``otel_agent.recovery.<transition>``, like receipt transitions, so
they arrive while the recovery runs. The ``receipt_recoveries`` view lines them up per operation and says
whether a limit was exceeded; an ``outcome_verified`` receipt of the operation after the start counts as the
success evidence too.

Authority, action, trigger, success evidence and reasons are bounded codes, as on receipts (no prose,
paths or payloads): ``policy:auto_redelegate``, ``human:alice``, ``outcome_verified``."""

from __future__ import annotations

import threading

from opentelemetry import trace

from . import _tracer
from . import attributes as A
from ._ids import id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._validate import amount
from .errors import InvalidValueError, ReceiptError
from .handoff import _code, _opaque

MODES = ("automatic", "manual")
TRANSITIONS = ("started", "attempt", "succeeded", "failed")


class Recovery:
    """One recovery of an operation: ``attempt()``, then ``succeeded()`` or ``failed()``."""

    __slots__ = ("_lock", "_misuse", "_tracer", "attempts", "operation_id", "recovery_id")

    def __init__(self, recovery_id: str, operation_id: str | None, misuse: Problems | None) -> None:
        self.recovery_id = recovery_id
        self.operation_id = operation_id
        self.attempts = 0
        self._misuse = misuse
        self._tracer: trace.Tracer | None = _tracer.current_tracer()
        self._lock = threading.Lock()

    def _emit(self, transition: str, fields: dict[str, object], problems: Problems) -> None:
        tracer = self._tracer or _tracer.current_tracer()
        if tracer is None:
            return
        attrs = base_attributes(current_scope(), A.KIND_RECOVERY)
        attrs[A.RECOVERY_ID] = self.recovery_id
        attrs[A.RECOVERY_TRANSITION] = transition
        put(attrs, A.RECEIPT_OPERATION_ID, self.operation_id)
        for key, value in fields.items():
            put(attrs, key, value)  # type: ignore[arg-type]
        put_misuse(attrs, [*(self._misuse or ()), *problems])
        emit_record(f"otel_agent.recovery.{transition}", attrs, tracer=tracer)

    def attempt(self, *, handoff_id: str | None = None, cost_usd: float | None = None,
                reason: str | None = None) -> int:  # fmt: skip
        """Record one attempt (``handoff_id``: the new delegation's, e.g. ``Delegation.retry().handoff_id``;
        ``cost_usd``: what the attempt cost, as the caller accounts it). Returns its 1-based number; an attempt
        beyond ``max_attempts`` is recorded all the same (the view flags the limit)."""
        p: Problems = []
        with self._lock:
            self.attempts += 1
            number = self.attempts
        self._emit(
            "attempt",
            {
                A.RECOVERY_ATTEMPT: number,
                A.RECEIPT_HANDOFF_ID: None if handoff_id is None else _opaque(handoff_id, "handoff_id", p),
                A.RECOVERY_COST_USD: None if cost_usd is None else amount(cost_usd, "cost_usd", p),
                A.RECOVERY_REASON: _code(reason, "reason", p),
            },
            p,
        )
        return number

    def succeeded(self, evidence_ref: str | None = None, reason: str | None = None) -> None:
        """The success evidence was observed; ``evidence_ref`` names it (a record or artifact id)."""
        p: Problems = []
        ref = None if evidence_ref is None else _opaque(evidence_ref, "evidence_ref", p)
        self._emit("succeeded", {A.RECOVERY_EVIDENCE_REF: ref, A.RECOVERY_REASON: _code(reason, "reason", p)}, p)

    def failed(self, reason: str) -> None:
        """The recovery gave up (``reason``: a required bounded code, e.g. ``max_attempts_reached``)."""
        p: Problems = []
        self._emit("failed", {A.RECOVERY_REASON: _code(reason, "reason", p, required=True)}, p)


def recover(
    operation: object,
    *,
    authority: str,
    max_attempts: int,
    success_evidence: str,
    max_cost_usd: float | None = None,
    time_limit_s: float | None = None,
    mode: str = "automatic",
    action: str | None = None,
    trigger: str | None = None,
    handoff_id: str | None = None,
    recovery_id: str | None = None,
) -> Recovery:
    """Record the start of a recovery of ``operation`` (an operation id, or a receipt / delegation /
    acceptance, whose handoff id is then the attempt recovered from unless ``handoff_id`` says otherwise).

    ``authority``: who or what allowed it (``policy:auto_redelegate``, ``human:alice``); ``mode``: ``automatic``
    or ``manual``; ``max_attempts`` (≥ 1) and a cost (``max_cost_usd``) or time (``time_limit_s``, from now)
    limit — at least one of the two; ``success_evidence``: what will mark it successful (``outcome_verified``,
    ``artifact:fact_check_report``); ``action`` (``redelegate``, ``rerun_verifier``) and ``trigger`` (the
    receipt state that prompted it: ``orphaned``, ``stuck``, ``outcome_failed``) are codes.
    """
    p: Problems = []
    rid = id_or_new(recovery_id, "rec", "recovery_id", p)
    if isinstance(operation, str):
        op: str | None = _opaque(operation, "operation_id", p)
    elif isinstance(getattr(operation, "operation_id", None), str):
        op = operation.operation_id  # type: ignore[attr-defined]
        if handoff_id is None:
            handoff_id = getattr(operation, "handoff_id", None)
    else:
        report(ReceiptError(f"operation must be an operation id or a receipt, got a {type(operation).__name__}"), p)
        op = None
    op_problems = list(p)
    if not (type(max_attempts) is int and max_attempts >= 1):
        report(InvalidValueError(f"max_attempts must be an int of at least 1, got {max_attempts!r}"), p)
        max_attempts = None  # type: ignore[assignment]
    cost = None if max_cost_usd is None else amount(max_cost_usd, "max_cost_usd", p)
    seconds = None if time_limit_s is None else amount(time_limit_s, "time_limit_s", p)
    if max_cost_usd is None and time_limit_s is None:
        report(InvalidValueError("a recovery needs a cost limit (max_cost_usd) or a time limit (time_limit_s)"), p,
               "recorded without")  # fmt: skip
    if mode not in MODES:
        report(InvalidValueError(f"mode must be one of {list(MODES)}, got {mode!r}"), p)
        mode = None  # type: ignore[assignment]
    recovery = Recovery(rid, op, None)
    recovery._emit(
        "started",
        {
            A.RECEIPT_HANDOFF_ID: None if handoff_id is None else _opaque(handoff_id, "handoff_id", p),
            A.RECOVERY_MODE: mode,
            A.RECOVERY_AUTHORITY: _code(authority, "authority", p, required=True),
            A.RECOVERY_ACTION: _code(action, "action", p),
            A.RECOVERY_TRIGGER: _code(trigger, "trigger", p),
            A.RECOVERY_MAX_ATTEMPTS: max_attempts,
            A.RECOVERY_MAX_COST_USD: cost,
            A.RECOVERY_TIME_LIMIT_S: seconds,
            A.RECOVERY_SUCCESS_EVIDENCE: _code(success_evidence, "success_evidence", p, required=True),
        },
        p,
    )
    recovery._misuse = op_problems or None  # every later transition says its operation id was bad, too
    return recovery
