"""Decision records (the model's proposal next to the policy gate's effective decision) and badcases.

Keeping both decisions is the point (seed 001): a system must not "quietly correct" the model. When they
differ, ``mismatch`` is true and, unless the caller says otherwise, ``review_required`` too."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.util.types import AttributeValue

from . import attributes as A
from ._ids import id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import optional_count, text
from .errors import InvalidValueError


def decision_record(
    name: str,
    *,
    model_decision: str,
    effective_decision: str,
    model_action: str | None = None,
    effective_action: str | None = None,
    expected_action: str | None = None,
    policy_passed: bool | None = None,
    reason: str | None = None,
    evidence_refs: Sequence[str] = (),
    iteration: int | None = None,
    review_required: bool | None = None,
    decision_id: str | None = None,
) -> str:
    """Record what the model proposed and what the policy gate made effective. Returns the decision id.

    ``mismatch`` = the decisions differ, or both actions are given and differ (left out, with
    ``review_required``, when a decision is invalid).
    """
    problems: Problems = []
    did = id_or_new(decision_id, "dec", "decision_id", problems)
    name = text(name, "decision name", problems)  # type: ignore[assignment]
    model_decision = text(model_decision, "model_decision", problems)  # type: ignore[assignment]
    effective_decision = text(effective_decision, "effective_decision", problems)  # type: ignore[assignment]
    if isinstance(evidence_refs, str) or not hasattr(evidence_refs, "__iter__"):
        report(InvalidValueError(f"evidence_refs must be a sequence of strings, got {evidence_refs!r}"), problems)
        refs: tuple[str, ...] = ()
    else:
        refs = tuple(str(r) for r in evidence_refs)
    iteration = optional_count(iteration, "iteration", problems)
    mismatch: bool | None = None
    if model_decision is not None and effective_decision is not None:
        mismatch = model_decision != effective_decision or (
            model_action is not None and effective_action is not None and model_action != effective_action
        )
    review = mismatch if review_required is None else review_required
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_DECISION)
        attrs[A.DECISION_ID] = did
        put(attrs, A.DECISION_NAME, name)
        put(attrs, A.DECISION_MODEL_DECISION, model_decision)
        put(attrs, A.DECISION_MODEL_ACTION, model_action)
        put(attrs, A.DECISION_EFFECTIVE_DECISION, effective_decision)
        put(attrs, A.DECISION_EFFECTIVE_ACTION, effective_action)
        put(attrs, A.DECISION_EXPECTED_ACTION, expected_action)
        put(attrs, A.DECISION_POLICY_PASSED, policy_passed)
        put(attrs, A.DECISION_MISMATCH, mismatch)
        put(attrs, A.DECISION_REVIEW_REQUIRED, review)
        put(attrs, A.DECISION_REASON, reason)
        put(attrs, A.DECISION_EVIDENCE_REFS, refs)
        put(attrs, A.ITERATION, iteration)
        put_misuse(attrs, problems)
        emit_record("otel_agent.decision", attrs, tracer=tracer)
    return did


MAX_RAW_OUTPUT_BYTES = 64 * 1024


def _put_raw_output(attrs: dict[str, AttributeValue], raw: object, problems: Problems) -> None:
    """The raw output, cut to MAX_RAW_OUTPUT_BYTES of UTF-8 at a character boundary; a cut is marked."""
    if not isinstance(raw, str):
        report(InvalidValueError(f"raw_model_output must be a string, got {type(raw).__name__}"), problems)
        return
    data = raw.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_RAW_OUTPUT_BYTES:
        attrs[A.BADCASE_RAW_MODEL_OUTPUT] = raw
        return
    attrs[A.BADCASE_RAW_MODEL_OUTPUT] = data[:MAX_RAW_OUTPUT_BYTES].decode("utf-8", "ignore")
    attrs[A.BADCASE_RAW_MODEL_OUTPUT_TRUNCATED] = True
    attrs[A.BADCASE_RAW_MODEL_OUTPUT_BYTES] = len(data)


def badcase(
    stage: str,
    *,
    error_type: str | None = None,
    message: str | None = None,
    error: BaseException | None = None,
    provider: str | None = None,
    model: str | None = None,
    raw_model_output: str | None = None,
    iteration: int | None = None,
    badcase_id: str | None = None,
    capture_content: bool | None = None,
) -> str:
    """Record a failure worth studying (JSON parse error, schema miss, policy conflict...). Returns its id.

    ``error`` fills ``error_type`` / ``message`` when they are not given. ``raw_model_output`` is the failure
    evidence (seed 001), so unlike ordinary content it is kept by default — bounded to 64 KiB of UTF-8, a cut
    marked — unless ``capture_content=False`` (a receiver-side redaction rule can drop it for everyone).
    """
    problems: Problems = []
    bid = id_or_new(badcase_id, "bad", "badcase_id", problems)
    stage = text(stage, "badcase stage", problems)  # type: ignore[assignment]
    if error is not None:
        error_type = error_type or type(error).__qualname__
        message = message if message is not None else str(error)
    if not error_type:
        report(InvalidValueError("a badcase needs error_type (or error)"), problems)
        error_type = None
    iteration = optional_count(iteration, "iteration", problems)
    tracer = current_tracer()
    if tracer is not None:
        scope = current_scope()
        attrs = base_attributes(scope, A.KIND_BADCASE)
        attrs[A.BADCASE_ID] = bid
        put(attrs, A.BADCASE_STAGE, stage)
        put(attrs, A.BADCASE_ERROR_TYPE, error_type)
        put(attrs, A.BADCASE_MESSAGE, message)
        put(attrs, A.BADCASE_PROVIDER, provider)
        put(attrs, A.BADCASE_MODEL, model)
        put(attrs, A.ITERATION, iteration)
        if raw_model_output is not None and capture_content is not False:
            _put_raw_output(attrs, raw_model_output, problems)
        put_misuse(attrs, problems)
        emit_record("otel_agent.badcase", attrs, tracer=tracer)
    return bid
