"""Argument checks shared by the helpers. Each returns the value when it is valid; otherwise it reports the
misuse (``_misuse.report``: strict mode raises ``InvalidValueError``) and returns ``None`` — the helper then
leaves the value out. Nothing is coerced or guessed."""

from __future__ import annotations

from collections.abc import Sequence

from ._misuse import Problems, report
from .errors import InvalidValueError


def text(value: object, what: str, problems: Problems | None) -> str | None:
    """A non-empty string."""
    if isinstance(value, str) and value:
        return value
    report(InvalidValueError(f"{what} must be a non-empty string, got {value!r}"), problems)
    return None


MAX_REF_CHARS = 2048
"""An input / output ref points at where data lives (an artifact id, a URI, a content hash); longer text is
content, which a ref must not carry."""


def ref(value: object, what: str, problems: Problems | None) -> str | None:
    """A reference: a non-empty string of at most ``MAX_REF_CHARS`` characters."""
    if isinstance(value, str) and 0 < len(value) <= MAX_REF_CHARS:
        return value
    shown = value if not isinstance(value, str) else f"a string of {len(value)} characters"
    report(InvalidValueError(f"{what} must be a reference of 1-{MAX_REF_CHARS} characters, got {shown!r}"), problems)
    return None


def one_of(value: object, allowed: Sequence[str], what: str, problems: Problems | None) -> str | None:
    """One of a fixed vocabulary."""
    if isinstance(value, str) and value in allowed:
        return value
    report(InvalidValueError(f"{what} must be one of {list(allowed)}, got {value!r}"), problems)
    return None


def count(value: object, what: str, problems: Problems | None) -> int | None:
    """A non-negative int (a bool is not one)."""
    if type(value) is int and value >= 0:
        return value
    report(InvalidValueError(f"{what} must be a non-negative int, got {value!r}"), problems)
    return None


def amount(value: object, what: str, problems: Problems | None) -> float | None:
    """A non-negative number (int or float, not bool), as a float."""
    if type(value) in (float, int) and value >= 0:  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    report(InvalidValueError(f"{what} must be a non-negative number, got {value!r}"), problems)
    return None


def number(value: object, what: str, problems: Problems | None) -> float | None:
    """Any number (int or float, not bool), as a float."""
    if type(value) in (float, int):
        return float(value)  # type: ignore[arg-type]
    report(InvalidValueError(f"{what} must be a number, got {value!r}"), problems)
    return None


def optional_count(value: object, what: str, problems: Problems | None) -> int | None:
    """None, or a non-negative int."""
    return None if value is None else count(value, what, problems)


def strings(value: object, what: str, problems: Problems | None) -> tuple[str, ...]:
    """A sequence of strings (not a single string); the non-strings are left out."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        report(InvalidValueError(f"{what} must be a sequence of strings, got {value!r}"), problems)
        return ()
    given = tuple(value)  # type: ignore[call-overload]
    out = tuple(v for v in given if isinstance(v, str))
    if len(out) != len(given):
        report(InvalidValueError(f"{what} must hold strings only, got {given!r}"), problems)
    return out
