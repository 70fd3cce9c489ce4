"""Record ids: generated cheaply when the caller does not pass one, validated when it does.

Generated ids are ``<prefix>_<16 hex of process-random salt><counter in hex>``: unique across processes with
overwhelming probability, ordered within a process, and ~0.2 µs to make (``uuid4`` costs ~1.5 µs, a large
share of the no-SDK budget).

The checks report a bad value through ``_misuse.report`` (strict mode raises ``InvalidIdError``) and return
``None``; ``id_or_new`` returns a generated id in place of a bad one, so a record always has an id."""

from __future__ import annotations

import itertools
import os
import re

from ._misuse import Problems, report
from .errors import InvalidIdError

_SALT = os.urandom(8).hex()
_counter = itertools.count(1)

# Receipt ids travel between processes in carriers: they must be opaque tokens, never paths, URLs or payloads.
OPAQUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")
GENERATED = "a generated id is used"


def new_id(prefix: str) -> str:
    return f"{prefix}_{_SALT}{next(_counter):x}"


def reseed() -> None:
    """Pick a new salt (call in a forked child so parent and child never mint the same ids)."""
    global _SALT, _counter
    _SALT = os.urandom(8).hex()
    _counter = itertools.count(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=reseed)


def check_id(value: object, what: str, problems: Problems | None) -> str | None:
    """A caller-supplied record id: any non-empty string of at most 256 characters (else None, reported)."""
    if isinstance(value, str) and 0 < len(value) <= 256:
        return value
    report(InvalidIdError(f"{what} must be a non-empty string of at most 256 characters, got {value!r}"), problems)
    return None


def id_or_new(value: str | None, prefix: str, what: str, problems: Problems | None) -> str:
    """The caller's id for a record, or a generated one (also in place of an invalid one, reported)."""
    if value is None:
        return new_id(prefix)
    if isinstance(value, str) and 0 < len(value) <= 256:
        return value
    report(
        InvalidIdError(f"{what} must be a non-empty string of at most 256 characters, got {value!r}"),
        problems,
        GENERATED,
    )
    return new_id(prefix)


def given_id(value: str | None, what: str, problems: Problems | None) -> str | None:
    """An optional caller id of the record itself: None when absent or invalid (reported), so that the caller
    mints one lazily."""
    if value is None or (isinstance(value, str) and 0 < len(value) <= 256):
        return value
    report(
        InvalidIdError(f"{what} must be a non-empty string of at most 256 characters, got {value!r}"),
        problems,
        GENERATED,
    )
    return None


def check_ids(values: object, what: str, problems: Problems | None) -> tuple[str, ...]:
    """A sequence of ids; the invalid ones (or all, when it is not a sequence) are left out and reported."""
    if isinstance(values, str) or values is None or not hasattr(values, "__iter__"):
        report(InvalidIdError(f"{what} must be a sequence of ids, got {values!r}"), problems)
        return ()
    out = []
    for v in values:  # type: ignore[attr-defined]
        checked = check_id(v, what, problems)
        if checked is not None:
            out.append(checked)
    return tuple(out)
