"""The one wording of what every face shows: money and why a cost is unknown, durations, token counts, and
text from telemetry made safe to print (control characters visible, cut with a marker).

The console, the CLI, the demo's summary and the MCP tools all say "unpriced (no price for this model)" for the
same row, by the same rule (``cost_missing_reason``, docs/views-runs.md "Cost").
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

ELLIPSIS = "…"

COST_MISSING = {
    "no_model": "no model named",
    "no_usage": "no token usage reported",
    "no_price": "no price for this model",
    "not_reported": "not reported",
}
"""Why a call has no cost, in words (``cost_missing_reason``)."""


def escape(text: str) -> str:
    """Control characters made visible (``\\n``, ``\\x1b``), so text from telemetry cannot move a terminal's
    cursor, recolour it or break a table row."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one ``…`` when something was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def shown(value: Any, width: int) -> str:
    """A telemetry value as one safe line: escaped, cut to ``width``."""
    return cut(escape(str(value)), width)


def positional(value: float) -> str:
    """A float without exponent notation, as short as round-trips (``7.5e-05`` → ``0.000075``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    text = format(Decimal(repr(value)), "f")
    return text[:-2] if text.endswith(".0") else text


def usd(value: Any) -> str:
    """Money in one notation: ``$`` and six decimals, more only for amounts below a millionth."""
    amount = float(value)
    if amount != 0 and abs(amount) < 5e-7:
        return "$" + positional(amount)
    return f"${amount:.6f}"


def unpriced(reason: str | None) -> str:
    """A call without a cost, in words: ``unpriced (no price for this model)``."""
    return f"unpriced ({COST_MISSING.get(reason or '', reason or 'reason not recorded')})"


def cost(value: Any, missing_reason: str | None = None, money: Any = usd) -> str:
    """A span's or run's cost: ``money(value)``, else ``unpriced (why)``; ``unknown`` with no reason either."""
    if value is not None:
        return str(money(value))
    return unpriced(missing_reason) if missing_reason else "unknown"


def unpriced_calls(n: Any) -> str:
    """``+2 unpriced calls`` (empty for none): what a total leaves out."""
    n = int(n or 0)
    return f"+{n} unpriced call{'s' if n != 1 else ''}" if n else ""


def duration(ms: Any) -> str:
    if ms is None:
        return "no duration"
    value = float(ms)
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.2f} ms"


def tokens(inp: Any, out: Any) -> str:
    if inp is None and out is None:
        return ""
    if inp is None:
        return f"tokens out {int(out)} (in not reported)"
    if out is None:
        return f"tokens in {int(inp)} (out not reported)"
    return f"tokens {int(inp)}→{int(out)}"
