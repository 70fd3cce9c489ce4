"""Templates (Jinja2, autoescape always on) and the value formats every page shares."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined

DASH = "—"


def fmt_ms(v: Any) -> str:
    if v is None:
        return DASH
    v = float(v)
    if v >= 60_000:
        return f"{v / 60_000:.1f} min"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 10:
        return f"{v:.0f} ms"
    return f"{v:.1f} ms" if v >= 1 or v == 0 else f"{v:.2f} ms"


def fmt_usd(v: Any) -> str:
    if v is None:
        return DASH
    v = float(v)
    if v == 0:
        return "$0"
    if abs(v) >= 1:
        return f"${v:,.2f}"
    return f"${v:.4f}" if abs(v) >= 0.01 else f"${v:.6f}"


def fmt_num(v: Any) -> str:
    if v is None:
        return DASH
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    try:
        return f"{int(v):,}"
    except (TypeError, ValueError, OverflowError):
        return str(v)


def fmt_pct(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return DASH
    return f"{float(v) * 100:.1f}%"


def fmt_ts(v: Any) -> str:
    if v is None:
        return DASH
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.UTC).replace(tzinfo=None)
        return v.strftime("%Y-%m-%d %H:%M:%S")
    return str(v)


def fmt_json(v: Any) -> str:
    """A JSON column (text) or value, indented for reading."""
    if v is None:
        return ""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return v
    return json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def as_items(v: Any) -> list[tuple[str, Any]]:
    """A JSON object (text or dict) as sorted (key, value text) pairs; values that are not scalars as JSON."""
    if v is None:
        return []
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return [("", v)]
    if not isinstance(v, dict):
        return [("", json.dumps(v, default=str))]
    out = []
    for key in sorted(v):
        value = v[key]
        out.append((key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)))
    return out


def q(v: Any) -> str:
    """A path segment (ids come from telemetry: quote everything)."""
    return quote(str(v), safe="")


def qs(args: dict[str, Any], **changes: Any) -> str:
    """``?a=1&b=2`` from the current arguments with ``changes`` applied (None drops a key)."""
    merged = {k: v for k, v in args.items() if v not in (None, "") and k != "refresh"}  # a refresh is one click
    for key, value in changes.items():
        if value in (None, ""):
            merged.pop(key, None)
        else:
            merged[key] = value
    return "?" + urlencode(merged) if merged else "?"


def short(v: Any, n: int = 14) -> str:
    s = "" if v is None else str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("otel_agent.console", "templates"),
        autoescape=True,  # always: every value shown is telemetry, written by someone else
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ms=fmt_ms, usd=fmt_usd, num=fmt_num, pct=fmt_pct, ts=fmt_ts, pretty_json=fmt_json, items=as_items,
        q=q, short=short,
    )  # fmt: skip
    env.globals.update(qs=qs, DASH=DASH)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
