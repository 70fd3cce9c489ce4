"""Authorization records (seed 001's manifest ``authorization``): who allowed the run to do what, and when.

Seed 001 puts a human authorization between the deterministic checks and the first engine run; the manifest
answers "is it authorised?". The record says who (``authorized_by``), what (``scope``: free form, e.g.
``unity_runs:3``) and whether it was granted — a refusal is recorded too. *When* is the record's own time (a
zero-length span, emitted at once): record it when the authorization is given or seen. The ``workflow_manifest``
view shows the latest one of the run, ``business_timeline`` every one."""

from __future__ import annotations

from . import attributes as A
from ._ids import id_or_new
from ._misuse import Problems, report
from ._scope import base_attributes, current_scope, emit_record, put, put_misuse
from ._tracer import current_tracer
from ._validate import text
from .errors import InvalidValueError

MAX_TEXT_CHARS = 512  # who, what and why: a line each, not a document


def _bounded(value: object, what: str, problems: Problems, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    out = text(value, what, problems)
    if out is not None and len(out) > MAX_TEXT_CHARS:
        report(InvalidValueError(f"{what} is longer than {MAX_TEXT_CHARS} characters"), problems)
        return out[: MAX_TEXT_CHARS - 1] + "…"
    return out


def authorization(
    scope: str,
    *,
    authorized_by: str,
    granted: bool = True,
    reason: str | None = None,
    authorization_id: str | None = None,
) -> str:
    """Record that ``authorized_by`` (a person or a policy) granted — or, with ``granted=False``, refused —
    ``scope`` (what may be done: free form, at most 512 characters), now, in the current run. Returns the id."""
    problems: Problems = []
    aid = id_or_new(authorization_id, "auth", "authorization_id", problems)
    scope_text = _bounded(scope, "authorization scope", problems, required=True)
    by = _bounded(authorized_by, "authorized_by", problems, required=True)
    why = _bounded(reason, "reason", problems)
    if not isinstance(granted, bool):
        report(InvalidValueError(f"granted must be a bool, got {granted!r}"), problems)
        granted = None  # type: ignore[assignment]
    tracer = current_tracer()
    if tracer is not None:
        attrs = base_attributes(current_scope(), A.KIND_AUTHORIZATION)
        attrs[A.AUTHORIZATION_ID] = aid
        put(attrs, A.AUTHORIZATION_BY, by)
        put(attrs, A.AUTHORIZATION_SCOPE, scope_text)
        put(attrs, A.AUTHORIZATION_GRANTED, granted)
        put(attrs, A.AUTHORIZATION_REASON, why)
        put_misuse(attrs, problems)
        emit_record("otel_agent.authorization", attrs, tracer=tracer)
    return aid
