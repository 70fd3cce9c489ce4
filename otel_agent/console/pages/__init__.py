"""One module per page family; each exports ``ROUTES``: (path, handler, methods, role) tuples."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from otel_agent.errors import InvalidPayloadError

MAX_TEXT_ARG = 500


@dataclass
class Page:
    """A window of rows: ``limit`` asked for, one more fetched to know whether there are more."""

    offset: int
    limit: int
    count: int
    more: bool

    @property
    def first(self) -> int:
        return self.offset + 1 if self.count else 0

    @property
    def last(self) -> int:
        return self.offset + self.count


def paged(rows: list[dict[str, Any]], offset: int, limit: int) -> tuple[list[dict[str, Any]], Page]:
    return rows[:limit], Page(offset, limit, min(len(rows), limit), len(rows) > limit)


MAX_OFFSET = 10_000_000


def page_args(request: Request, default_limit: int = 50, max_limit: int = 200) -> tuple[int, int]:
    """``(limit, offset)`` of a paged list from ``?limit=&offset=``, clamped; ``paged`` cuts the rows to them."""
    return int_arg(request, "limit", default_limit, 1, max_limit), int_arg(request, "offset", 0, 0, MAX_OFFSET)


def int_arg(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        return max(lo, min(hi, int(raw)))
    except ValueError as exc:
        raise InvalidPayloadError(f"{name} must be a whole number") from exc


def text_arg(request: Request, name: str) -> str | None:
    raw = (request.query_params.get(name) or "").strip()
    return raw[:MAX_TEXT_ARG] or None


def choice_arg(request: Request, name: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
    raw = request.query_params.get(name) or default
    return raw if raw in choices else default


def time_arg(request: Request, name: str) -> _dt.datetime | None:
    """A UTC time from ``YYYY-MM-DDTHH:MM[:SS]`` (a datetime-local field) or a relative ``-1h`` / ``-7d``."""
    raw = (request.query_params.get(name) or "").strip()
    if not raw:
        return None
    now = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    units = {"m": 60, "h": 3600, "d": 86400}
    if raw.startswith("-") and raw[-1:] in units and raw[1:-1].isdigit():
        return now - _dt.timedelta(seconds=int(raw[1:-1]) * units[raw[-1]])
    try:
        value = _dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidPayloadError(f"{name}: not a time ({raw[:40]!r}); use 2026-01-31T12:00 or -24h") from exc
    if value.tzinfo is not None:
        value = value.astimezone(_dt.UTC).replace(tzinfo=None)
    return value
