"""A run's or trace's spans as tree rows beside a waterfall: the one span-tree model (``read.tree.build``: order,
depth, parents) and its labels (``read.tree.label``), with the waterfall's bar geometry, the problems (errors,
blocked guards, retries, fallbacks) and their ancestors to open on load, the critical path, find-in-trace
matches, a zoom window and the minimap. Presentation only: every number comes from the views
(``run_spans_for_run`` rows, read/sql/run_spans.sql)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otel_agent.console.render import fmt_ms, fmt_usd
from otel_agent.read import tree as model
from otel_agent.read.tree import node_key

WIDTH = 1000  # the waterfall's SVG viewBox width
MAX_INDENT = 10
RECORD_PAGES = {"claim": "/claims/", "artifact": "/artifacts/"}
PROBLEM_MARKS = ("err", "blocked", "retry", "fallback")
MAX_TREE = 10_000
"""The most spans a run's or trace's tree shows (``?limit=``, 500 by default); 10,000 stay usable
(bench/console_trace.py measures the page)."""
MINIMAP_ROWS = 240  # at most this many lines in the minimap: a big trace's rows are drawn in bands


@dataclass
class Node:
    row: dict[str, Any]
    depth: int
    key: str
    parent_key: str | None
    has_children: bool = False
    x: float = 0.0
    w: float = 0.0
    kind: str = ""
    title: str = ""
    meta: list[str] = field(default_factory=list)
    marks: list[tuple[str, str]] = field(default_factory=list)  # (css class, text)
    record_href: str | None = None
    problem: bool = False  # an error, a blocked guard, a retry or a fallback
    critical: bool = False  # on the critical path
    found: bool = False  # matches the find-in-trace text
    reveal: bool = False  # open on load: an ancestor of a problem, a match or the selected node

    @property
    def anchor(self) -> str:
        """The row's element id (a problem or a match links to it)."""
        return "n-" + self.key.replace(":", "-")


@dataclass
class Window:
    """The waterfall's zoom: the shown part of the trace as fractions of its duration (0–1)."""

    lo: float = 0.0
    hi: float = 1.0

    @classmethod
    def parse(cls, raw: str | None) -> Window:
        """``"0.25-0.5"``; anything unreadable is the whole trace."""
        try:
            lo_s, hi_s = (raw or "").split("-", 1)
            lo, hi = max(0.0, min(1.0, float(lo_s))), max(0.0, min(1.0, float(hi_s)))
        except ValueError:
            return cls()
        return cls(lo, hi) if hi - lo >= 0.001 else cls()

    @property
    def whole(self) -> bool:
        return self.lo <= 0.0 and self.hi >= 1.0

    def arg(self, lo: float, hi: float) -> str:
        lo, hi = max(0.0, lo), min(1.0, hi)
        return f"{lo:.4f}-{hi:.4f}"

    def zoom_in(self) -> str:
        mid, half = (self.lo + self.hi) / 2, (self.hi - self.lo) / 4
        return self.arg(mid - half, mid + half)

    def zoom_out(self) -> str:
        mid, half = (self.lo + self.hi) / 2, (self.hi - self.lo)
        lo, hi = mid - half, mid + half
        if lo < 0:
            lo, hi = 0.0, hi - lo
        if hi > 1:
            lo, hi = lo - (hi - 1), 1.0
        return self.arg(lo, hi)

    def pan(self, by: float) -> str:
        span = self.hi - self.lo
        lo = max(0.0, min(1.0 - span, self.lo + by * span))
        return self.arg(lo, lo + span)


@dataclass
class Minimap:
    """The whole trace in one small SVG: ``bars`` (x, y, w, problem) in a WIDTH × ``height`` box, one line per
    span or per band of spans, and the zoom window (``lo``, ``hi`` in viewBox units)."""

    bars: list[tuple[float, int, float, bool]]
    height: int
    lo: float
    hi: float


@dataclass
class View:
    """What the tree template draws: ``nodes`` in tree order, the ``problems`` and ``found`` nodes in order, the
    time span (ns) of the whole trace and of the zoom ``window``, the axis ticks and the minimap."""

    nodes: list[Node]
    t0: int
    t1: int
    window: Window
    axis: list[tuple[float, str]]
    minimap: Minimap
    problems: list[Node]
    found: list[Node]
    critical_ms: float = 0.0

    @property
    def root_name(self) -> str | None:
        """The first root span's name: the trace's title (a hex id says nothing)."""
        for n in self.nodes:
            if n.parent_key is None:
                return str(n.row.get("span_name") or n.title or "") or None
        return None


def linked_keys(links: list[dict[str, Any]]) -> set[str]:
    """The keys of this page's spans that a handoff link starts or ends at (handoff_links.sql rows)."""
    return {node_key(lk["trace_id"], lk["span_id"]) for lk in links}


def _label(node: Node) -> None:
    r = node.row
    found = model.label(r, fmt_usd)
    node.kind, node.title, node.meta, node.marks = found.kind, found.title, found.details, found.marks
    node.problem = any(cls in PROBLEM_MARKS for cls, _ in node.marks)
    if (r.get("category") or "other") == "record":
        kind = r.get("record_kind") or "record"
        if kind in ("artifact_version", "artifact") and r.get("artifact_id"):
            node.record_href = RECORD_PAGES["artifact"] + str(r["artifact_id"])
        elif kind == "claim" and r.get("record_id"):
            node.record_href = RECORD_PAGES["claim"] + str(r["record_id"])


def _times(r: dict[str, Any], t0: int) -> tuple[int, int]:
    start = r.get("start_ns") or t0
    end = r.get("end_ns") or start
    return start, max(end, start)


def critical_path(nodes: list[Node], t0: int) -> float:
    """Mark the spans on the critical path (as Jaeger draws it): from each root, the child that finished last
    before its parent ended, then the child that finished last before that one started, and so on, each walked
    the same way. Returns the milliseconds it covers."""
    kids: dict[str | None, list[Node]] = {}
    for n in nodes:
        kids.setdefault(n.parent_key, []).append(n)
    roots = kids.get(None, [])
    if not roots:
        return 0.0
    root = max(roots, key=lambda n: _times(n.row, t0)[1])
    stack: list[tuple[Node, int]] = [(root, _times(root.row, t0)[1])]
    while stack:
        node, limit = stack.pop()
        node.critical = True
        start, end = _times(node.row, t0)
        t = min(end, limit)
        for child in sorted(kids.get(node.key, []), key=lambda c: _times(c.row, t0)[1], reverse=True):
            c_start, c_end = _times(child.row, t0)
            if c_end <= t or c_start < t:  # finished before the cursor, or running across it
                stack.append((child, t))
                t = c_start
            if t <= start:
                break
    s, e = _times(root.row, t0)
    return (e - s) / 1e6


def build(
    rows: list[dict[str, Any]], linked: set[str] | None = None, *, window: Window | None = None,
    found: set[str] | None = None, selected: str | None = None,
) -> View:  # fmt: skip
    """The tree of ``rows``: spans hang under their stored parent; the others are roots."""
    linked, found, window = linked or set(), found or set(), window or Window()
    starts = [r["start_ns"] for r in rows if r.get("start_ns") is not None]
    ends = [r["end_ns"] for r in rows if r.get("end_ns") is not None]
    t0 = min(starts) if starts else 0
    t1 = max([*ends, t0 + 1])
    w0 = t0 + int(window.lo * (t1 - t0))
    w1 = max(t0 + int(window.hi * (t1 - t0)), w0 + 1)
    scale = WIDTH / (w1 - w0)
    nodes: list[Node] = []
    for span in model.build(rows):
        r = span.row
        node = Node(r, min(span.depth, MAX_INDENT), span.key, span.parent_key, has_children=span.has_children)
        start, end = _times(r, t0)
        x0 = max((start - w0) * scale, 0.0)
        x1 = min((end - w0) * scale, float(WIDTH))
        if x1 < 0 or x0 > WIDTH:  # outside the zoom window: no bar
            node.x, node.w = 0.0, 0.0
        else:
            node.x, node.w = round(min(x0, WIDTH - 3.0), 2), round(max(x1 - x0, 3.0), 2)
        _label(node)
        if span.key in linked:
            node.marks.append(("link", "handoff link"))
        node.found = span.key in found
        nodes.append(node)
    critical_ms = critical_path(nodes, t0)
    by_key = {n.key: n for n in nodes}
    for n in nodes:
        if n.problem or n.found or n.key == selected:
            parent = n.parent_key
            while parent and parent in by_key and not by_key[parent].reveal:
                by_key[parent].reveal = True
                parent = by_key[parent].parent_key
    return View(
        nodes, t0, t1, window, axis(w0, w1, offset_ns=w0 - t0), minimap(nodes, t0, t1, window),
        [n for n in nodes if n.problem], [n for n in nodes if n.found], critical_ms,
    )  # fmt: skip


def minimap(nodes: list[Node], t0: int, t1: int, window: Window) -> Minimap:
    """Every span as a line in tree order; past ``MINIMAP_ROWS`` spans, each line is a band of consecutive rows
    drawn from its earliest start to its latest end (a problem in the band marks it)."""
    scale = WIDTH / max(t1 - t0, 1)
    per = max(1, -(-len(nodes) // MINIMAP_ROWS))
    bars: list[tuple[float, int, float, bool]] = []
    for y, i in enumerate(range(0, len(nodes), per)):
        band = nodes[i : i + per]
        spans = [_times(n.row, t0) for n in band]
        s, e = min(a for a, _ in spans), max(b for _, b in spans)
        x = round((s - t0) * scale, 1)
        bars.append((x, y, round(max((e - s) * scale, 2.0), 1), any(n.problem for n in band)))
    return Minimap(bars, max(len(bars), 1), round(window.lo * WIDTH, 1), round(window.hi * WIDTH, 1))


def axis(t0: int, t1: int, n: int = 5, offset_ns: int = 0) -> list[tuple[float, str]]:
    """Tick positions (percent of the waterfall) and labels from the start of the trace."""
    total_ms = (t1 - t0) / 1e6
    off = offset_ns / 1e6
    return [(round(100 * i / (n - 1), 2), fmt_ms(off + total_ms * i / (n - 1))) for i in range(n)]


__all__ = ["MAX_TREE", "Minimap", "Node", "View", "Window", "axis", "build", "linked_keys", "node_key"]
