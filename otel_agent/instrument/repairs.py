"""Repair records (seed 001's ``repair_history.json``): what changed from one candidate to the next, and why.

A candidate history says what each round's candidate *was*; a repair says how one became the next — the action,
whether it was applied, the value before and after, the reason, what it targeted, and who computed it (a
deterministic repair tool or the model: seed 001's "did the model change the number, or the repair tool?").
``from_version_id`` / ``to_version_id`` name the candidate versions (artifact versions) it went between, so the
``candidate_history`` view can line up candidate, evaluation and repair per round."""

from __future__ import annotations

import json

from . import attributes as A
from ._ids import check_id, id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import one_of, optional_count, text
from .errors import InvalidValueError

COMPUTED_BY = ("deterministic", "model", "human")
MAX_VALUE_CHARS = 4096  # before / after: a value, not a document (the candidate itself is an artifact version)


def _value(value: object, what: str, problems: Problems) -> str | None:
    """A before/after value as text: strings as they are, anything else as JSON; bounded."""
    if value is None:
        return None
    if isinstance(value, str):
        out = value
    else:
        try:
            out = json.dumps(value, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            report(InvalidValueError(f"{what} must be a string or JSON-serialisable, got {type(value).__name__}"),
                   problems)  # fmt: skip
            return None
    if len(out) > MAX_VALUE_CHARS:
        report(InvalidValueError(f"{what} is longer than {MAX_VALUE_CHARS} characters"), problems)
        return out[: MAX_VALUE_CHARS - 1] + "…"
    return out


def repair(
    action: str,
    *,
    applied: bool,
    iteration: int | None = None,
    target: str | None = None,
    before: object = None,
    after: object = None,
    reason: str | None = None,
    computed_by: str = "deterministic",
    computed_by_name: str | None = None,
    from_version_id: str | None = None,
    to_version_id: str | None = None,
    repair_id: str | None = None,
) -> str:
    """Record one repair: ``action`` (e.g. ``REDUCE_BULLETS_PER_WAVE``) in round ``iteration``, ``applied`` or
    not, on ``target`` (candidate / artifact / field), ``before`` → ``after`` (strings, else JSON), ``reason``,
    ``computed_by`` one of ``deterministic`` / ``model`` / ``human`` (``computed_by_name``: which tool or model),
    between candidate versions ``from_version_id`` → ``to_version_id``. Returns the repair id."""
    problems: Problems = []
    rid = id_or_new(repair_id, "rep", "repair_id", problems)
    action = text(action, "repair action", problems)  # type: ignore[assignment]
    if not isinstance(applied, bool):
        report(InvalidValueError(f"applied must be a bool, got {applied!r}"), problems)
        applied = None  # type: ignore[assignment]
    iteration = optional_count(iteration, "iteration", problems)
    computed = one_of(computed_by, COMPUTED_BY, "computed_by", problems)
    before_text = _value(before, "before", problems)
    after_text = _value(after, "after", problems)
    from_id = check_id(from_version_id, "from_version_id", problems) if from_version_id is not None else None
    to_id = check_id(to_version_id, "to_version_id", problems) if to_version_id is not None else None
    target, reason, computed_by_name = (
        text(v, what, problems) if v is not None else None
        for v, what in ((target, "target"), (reason, "reason"), (computed_by_name, "computed_by_name"))
    )
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_REPAIR)
        attrs[A.REPAIR_ID] = rid
        put(attrs, A.REPAIR_ACTION, action)
        put(attrs, A.REPAIR_APPLIED, applied)
        put(attrs, A.ITERATION, iteration)
        put(attrs, A.REPAIR_TARGET, target)
        put(attrs, A.REPAIR_BEFORE, before_text)
        put(attrs, A.REPAIR_AFTER, after_text)
        put(attrs, A.REPAIR_REASON, reason)
        put(attrs, A.REPAIR_COMPUTED_BY, computed)
        put(attrs, A.REPAIR_COMPUTED_BY_NAME, computed_by_name)
        put(attrs, A.REPAIR_FROM_VERSION_ID, from_id)
        put(attrs, A.REPAIR_TO_VERSION_ID, to_id)
        put_misuse(attrs, problems)
        emit_record("otel_agent.repair", attrs, tracer=tracer)
    return rid
