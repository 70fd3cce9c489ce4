"""The action a record belongs to (seed 001: "is this telemetry really from the candidate we just ran?").

Evidence and verifier results say which action they were *produced for*; a claim says which action it is
*about*. Each is an ``ActionBinding`` — run id, candidate/config hash, variant, any of them — emitted as
``otel_agent.action.*``. The ``evidence_binding_mismatches`` view flags a citation whose claim and evidence
name different values for a component both give, and ``claim_support`` does not count such evidence (old
telemetry mistaken for new)."""

from __future__ import annotations

from typing import NamedTuple

from opentelemetry.util.types import AttributeValue

from . import attributes as A
from ._misuse import Problems, report
from ._scope import put
from ._validate import text
from .errors import InvalidValueError


class ActionBinding(NamedTuple):
    run_id: str | None = None
    config_hash: str | None = None
    variant: str | None = None


def put_binding(attrs: dict[str, AttributeValue], binding: object, problems: Problems) -> None:
    """Set the binding's components (checked: non-empty strings) on ``attrs``."""
    if binding is None:
        return
    if not isinstance(binding, ActionBinding):
        report(InvalidValueError(f"action must be an ActionBinding, got {type(binding).__name__}"), problems)
        return
    for key, value, what in (
        (A.ACTION_RUN_ID, binding.run_id, "action run_id"),
        (A.ACTION_CONFIG_HASH, binding.config_hash, "action config_hash"),
        (A.ACTION_VARIANT, binding.variant, "action variant"),
    ):
        if value is not None:
            put(attrs, key, text(value, what, problems))
