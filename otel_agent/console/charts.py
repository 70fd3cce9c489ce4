"""Chart geometry for inline SVG, computed server-side (no chart library, no script): the templates draw the
rectangles (``_macros.html`` ``bar_chart`` / ``hbars``) with SVG attributes only, which the CSP allows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    cls: str
    tip: str


@dataclass
class Tick:
    y: float
    label: str


@dataclass
class Label:
    x: float
    text: str
    anchor: str


@dataclass
class BarChart:
    title: str
    width: int = 420
    height: int = 120
    left: int = 40
    bars: list[Bar] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


def _nice(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 1.0
    while exp * 10 <= v:
        exp *= 10
    while exp > v:
        exp /= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def column_chart(
    title: str,
    buckets: Sequence[dict[str, Any]],
    value: str,
    label: Callable[[Any], str],
    fmt: Callable[[Any], str],
    cls: str = "",
    highlight: str | None = None,
) -> BarChart:
    """One bar per bucket (rows with ``bucket`` and ``value``); ``highlight`` overlays a second series in red."""
    chart = BarChart(title)
    top_px, bottom_px = 6, chart.height - 14
    plot_h = bottom_px - top_px
    vmax = _nice(max([float(b.get(value) or 0) for b in buckets] + [0.0]))
    for i in range(3):
        v = vmax * i / 2
        chart.ticks.append(Tick(bottom_px - plot_h * i / 2, fmt(v)))
    # room for the longest tick label (9 px type, ~5.6 px a character): "$0.000500" is not cut at the left edge
    chart.left = max(chart.left, int(8 + 5.6 * max(len(t.label) for t in chart.ticks)))
    n = max(len(buckets), 1)
    slot = (chart.width - chart.left) / n
    for i, b in enumerate(buckets):
        v = float(b.get(value) or 0)
        h = plot_h * v / vmax
        w = min(max(slot * 0.76, 1), 28.0)
        x = chart.left + i * slot + (slot - w) / 2
        chart.bars.append(Bar(round(x, 1), round(bottom_px - h, 1), round(w, 1), round(h, 1), cls,
                              f"{label(b['bucket'])}: {fmt(v)}"))  # fmt: skip
        if highlight and b.get(highlight):
            hv = float(b[highlight])
            hh = plot_h * hv / vmax
            chart.bars.append(Bar(round(x, 1), round(bottom_px - hh, 1), round(w, 1), round(hh, 1), "bad",
                                  f"{label(b['bucket'])}: {fmt(hv)} {highlight}"))  # fmt: skip
    if buckets:
        chart.labels.append(Label(chart.left, label(buckets[0]["bucket"]), "start"))
        chart.labels.append(Label(chart.width, label(buckets[-1]["bucket"]), "end"))
    return chart


@dataclass
class HRow:
    label: str
    pct: float
    text: str
    cls: str = ""
    pct2: float | None = None


@dataclass
class HBars:
    title: str
    rows: list[HRow] = field(default_factory=list)


def hbars(
    title: str,
    rows: Sequence[dict[str, Any]],
    label: str,
    value: str,
    fmt: Callable[[Any], str],
    second: str | None = None,
    limit: int = 12,
) -> HBars:
    """Horizontal bars of ``value`` per ``label``, largest first; ``second`` (≤ value) drawn darker inside."""
    ordered = sorted(rows, key=lambda r: float(r.get(value) or 0), reverse=True)[:limit]
    vmax = max([float(r.get(value) or 0) for r in ordered] + [0.0]) or 1.0
    out = HBars(title)
    for r in ordered:
        v = float(r.get(value) or 0)
        p2 = None if second is None else round(100 * float(r.get(second) or 0) / vmax, 2)
        out.rows.append(HRow(str(r.get(label) if r.get(label) is not None else "(none)"), round(100 * v / vmax, 2),
                             fmt(r.get(value)), pct2=p2))  # fmt: skip
    return out
