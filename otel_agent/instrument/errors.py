"""Exceptions raised on purpose by the instrumentation helpers.

Deliberately independent of ``otel_agent.errors`` (which imports grpc): the instrumentation library depends on
``opentelemetry-api`` only, so importing it must not pull in the receiver's dependencies.
"""

from __future__ import annotations


class InstrumentError(Exception):
    """Base class of every error the instrumentation helpers raise on purpose."""


class InvalidValueError(InstrumentError, ValueError):
    """An argument is outside its documented vocabulary (e.g. confidence ``'sure'``)."""


class InvalidIdError(InvalidValueError):
    """An id is empty, not a string, or (for handoff ids) not opaque."""


class ContextBudgetError(InvalidValueError):
    """A context budget is impossible: reserve >= total, negative numbers, or shares summing above 100 %."""


class BudgetExceededError(InstrumentError):
    """A flow run with ``enforce_budgets=True`` was asked to start a call beyond one of its budgets."""

    def __init__(self, budget: str, limit: float, used: float) -> None:
        super().__init__(f"budget {budget!r} exceeded: limit {limit:g}, already used {used:g}")
        self.budget = budget
        self.limit = limit
        self.used = used


class CarrierError(InstrumentError, ValueError):
    """A handoff carrier is not a dict of strings, lacks the receipt ids, or holds something it must not."""


class ReceiptError(InvalidValueError):
    """A receipt transition was given a reason that is not a bounded code, or a missing dependency."""


class NotActiveError(InstrumentError, RuntimeError):
    """A helper handle was used outside its ``with`` block (before entering or after leaving)."""
