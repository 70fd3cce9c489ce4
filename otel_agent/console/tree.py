"""A run's or trace's spans as tree rows beside a waterfall: the one span-tree model (``read.tree.build``: order,
depth, parents) and its labels (``read.tree.label``), with the waterfall's bar geometry, the problems (errors,
blocked guards, retries, fallbacks) and their ancestors to open on load, the critical path, find-in-trace
matches, a zoom window and the minimap. Presentation only: every number comes from the views
(``run_spans_for_run`` rows, read/sql/run_spans.sql).

A big tree (more than ``WHOLE_TREE`` spans) is sent in part (``View.rows``): the part open on load (the first
levels, within ``OPEN_ROWS`` rows, and the way to every problem, match and the selected span), each open node's
children at most ``CHILD_PAGE`` at a time, the rest as ``Gap`` rows; a node whose children were not sent is
``lazy``. ``children`` gives the rows of one node's children (or of a gap) on demand: the page's fragment
URL (``…/tree?parent=KEY&from=&to=``), also a page of its own for reading without JavaScript. The minimap and
the critical path are computed from every span all the same (a compact summary, not rows)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
WHOLE_TREE = 1_500
"""Up to this many spans a tree is sent whole (every row; expanding never asks the server: simplest, and
~1.3 MB of HTML at most); past it, in part."""
OPEN_ROWS = 300  # a partial tree opens whole levels on load while they add up to at most this many rows
CHILD_PAGE = 100  # the children of one node sent at once (the rest: a gap row that fetches them)
REVEAL_MAX = 200
"""Problems (the worst first: errors and blocked guards, then fallbacks, then retries) and matches whose way a
partial tree opens on load; the rest are marked when their rows arrive."""
GAP_MIN = 3  # fewer spans than this between two sent ones are sent too (a gap row would be as big as they are)


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
    start: int = 0  # ns: where its bar starts and ends (a span in progress: ends at the last activity)
    end: int = 0
    running: bool = False  # in progress (announced by a pending span, not ended yet): an open bar
    open: bool = False  # a partial tree's node sent open (its children, or gaps for them, follow it)
    lazy: bool = False  # a partial tree's node whose children were not sent: fetched when opened
    child_count: int = 0
    labelled: bool = False
    gap = False

    @property
    def anchor(self) -> str:
        """The row's element id (a problem or a match links to it)."""
        return "n-" + self.key.replace(":", "-")


@dataclass
class Gap:
    """Children ``lo``..``hi`` (their indexes among ``parent_key``'s children, "" for the roots) not sent:
    a row that fetches them."""

    parent_key: str
    depth: int
    lo: int
    hi: int
    gap = True

    @property
    def count(self) -> int:
        return self.hi - self.lo


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
    running: list[int] = field(default_factory=list)  # the lines (y) that hold a span in progress


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
    rows: list[Node | Gap] = field(default_factory=list)
    """What is sent: every node (``partial`` False), or the open part with gaps."""
    partial: bool = False
    kids: dict[str, list[Node]] = field(default_factory=dict)  # parent key ("" for the roots) → children
    linked: set[str] = field(default_factory=set)
    running: int = 0  # spans in progress

    by_key: dict[str, Node] = field(default_factory=dict)

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


def _label(node: Node, linked: set[str]) -> None:
    if node.labelled:
        return
    node.labelled = True
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
    if node.key in linked:
        node.marks.append(("link", "handoff link"))
    if node.running:
        node.marks.append(("running", "running"))


def severity(n: Node) -> int:
    """0 for an error or a blocked guard, 1 a fallback, 2 a retry (the order of the problems strip)."""
    r = n.row
    if r.get("is_error") or r.get("guard_outcome") == "blocked":
        return 0
    return 1 if r.get("fallback_count") else 2


def _is_problem(r: dict[str, Any]) -> bool:
    """What ``read.tree.label`` marks err, retry, fallback or blocked, without labelling the span."""
    return bool(r.get("is_error") or r.get("retry_count") or r.get("fallback_count")) or (
        r.get("guard_outcome") == "blocked"
    )


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
    root = max(roots, key=lambda n: n.end)
    stack: list[tuple[Node, int]] = [(root, root.end)]
    while stack:
        node, limit = stack.pop()
        node.critical = True
        start, end = node.start, node.end
        t = min(end, limit)
        for child in sorted(kids.get(node.key, []), key=lambda c: c.end, reverse=True):
            c_start, c_end = child.start, child.end
            if c_end <= t or c_start < t:  # finished before the cursor, or running across it
                stack.append((child, t))
                t = c_start
            if t <= start:
                break
    return (root.end - root.start) / 1e6


def build(
    rows: list[dict[str, Any]], linked: set[str] | None = None, *, window: Window | None = None,
    found: set[str] | None = None, selected: str | None = None, running: set[str] | None = None,
    whole: int = WHOLE_TREE,
) -> View:  # fmt: skip
    """The tree of ``rows``: spans hang under their stored parent; the others are roots. ``running``: the keys
    of spans in progress (drawn from their start to the last activity of the rows); past ``whole`` spans the
    tree is sent in part (``View.rows``)."""
    linked, found, window, running = linked or set(), found or set(), window or Window(), running or set()
    starts = [r["start_ns"] for r in rows if r.get("start_ns") is not None]
    ends = [r["end_ns"] for r in rows if r.get("end_ns") is not None]
    t0 = min(starts) if starts else 0
    t1 = max([*ends, *starts, t0 + 1])  # the last activity: a span in progress has started, not ended
    w0 = t0 + int(window.lo * (t1 - t0))
    w1 = max(t0 + int(window.hi * (t1 - t0)), w0 + 1)
    scale = WIDTH / (w1 - w0)
    nodes: list[Node] = []
    for span in model.build(rows):
        r = span.row
        node = Node(r, min(span.depth, MAX_INDENT), span.key, span.parent_key, has_children=span.has_children)
        node.start, node.end = _times(r, t0)
        if span.key in running or r.get("in_progress"):
            node.running, node.end = True, max(t1, node.start)
        x0 = max((node.start - w0) * scale, 0.0)
        x1 = min((node.end - w0) * scale, float(WIDTH))
        if x1 < 0 or x0 > WIDTH:  # outside the zoom window: no bar
            node.x, node.w = 0.0, 0.0
        else:
            node.x, node.w = round(min(x0, WIDTH - 3.0), 2), round(max(x1 - x0, 3.0), 2)
        node.problem = _is_problem(r)
        node.found = span.key in found
        nodes.append(node)
    critical_ms = critical_path(nodes, t0)
    by_key = {n.key: n for n in nodes}
    kids: dict[str, list[Node]] = {}
    for n in nodes:
        kids.setdefault(n.parent_key or "", []).append(n)
        n.child_count = 0
    for key, children in kids.items():
        if key in by_key:
            by_key[key].child_count = len(children)
    problems = sorted((n for n in nodes if n.problem), key=severity)  # stable: tree order within a severity
    matches = [n for n in nodes if n.found]
    partial = len(nodes) > whole
    targets = [*problems[:REVEAL_MAX], *matches[:REVEAL_MAX]] if partial else [*problems, *matches]
    targets += [by_key[selected]] if selected in by_key else []
    for n in targets:
        parent = n.parent_key
        while parent and parent in by_key and not by_key[parent].reveal:
            by_key[parent].reveal = True
            parent = by_key[parent].parent_key
    view = View(
        nodes, t0, t1, window, axis(w0, w1, offset_ns=w0 - t0), minimap(nodes, t0, t1, window),
        problems, matches, critical_ms, kids=kids, linked=linked, partial=partial,
        running=sum(1 for n in nodes if n.running), by_key=by_key,
    )  # fmt: skip
    view.rows = _open_part(view, {n.key for n in targets}) if partial else list(nodes)
    for n in [*view.rows, *problems, *matches]:
        if not n.gap:
            _label(n, linked)  # type: ignore[arg-type]
    return view


def _open_levels(view: View) -> set[str]:
    """The nodes of the first levels to open on load: whole levels, while the rows they add stay within
    ``OPEN_ROWS`` (the roots' level always)."""
    opened: set[str] = set()
    frontier = view.kids.get("", [])[:CHILD_PAGE]
    shown = len(frontier)
    first = True
    while frontier:
        parents = [n for n in frontier if n.key in view.kids]
        add = sum(min(len(view.kids[n.key]), CHILD_PAGE) for n in parents)
        if not first and shown + add > OPEN_ROWS:
            break
        first = False
        opened.update(n.key for n in parents)
        shown += add
        frontier = [c for n in parents for c in view.kids[n.key][:CHILD_PAGE]]
    return opened


def _page(children: list[Node], parent_key: str, chosen: set[int]) -> list[Node | Gap]:
    """``children`` in order, those not ``chosen`` (indexes) as gaps, one per run of them."""
    out: list[Node | Gap] = []
    i = 0
    while i < len(children):
        if i in chosen:
            out.append(children[i])
            i += 1
            continue
        j = i
        while j < len(children) and j not in chosen:
            j += 1
        if j - i < GAP_MIN:
            out += children[i:j]
        else:
            out.append(Gap(parent_key, children[i].depth, i, j))
        i = j
    return out


def _open_part(view: View, targets: set[str]) -> list[Node | Gap]:
    """The rows of a partial tree, in tree order: the first levels open, the way to each target open (its
    ancestors open, showing the target and the other open ways among their children), gaps for the rest."""
    opened = _open_levels(view)

    def chosen(children: list[Node], first_page: bool) -> set[int]:
        picked = set(range(min(len(children), CHILD_PAGE))) if first_page else set()
        return picked | {i for i, c in enumerate(children) if c.reveal or c.key in targets}

    out: list[Node | Gap] = []
    roots = view.kids.get("", [])
    stack: list[Node | Gap] = list(reversed(_page(roots, "", chosen(roots, True))))
    while stack:
        item = stack.pop()
        out.append(item)
        if item.gap:
            continue
        n: Node = item  # type: ignore[assignment]
        children = view.kids.get(n.key)
        if not children:
            continue
        if n.key in opened or n.reveal:
            n.open = True
            stack.extend(reversed(_page(children, n.key, chosen(children, n.key in opened))))
        else:
            n.lazy = True
    return out


def children(view: View, parent_key: str, lo: int = 0, hi: int | None = None) -> list[Node | Gap]:
    """The rows for ``parent_key``'s children ``lo``..``hi`` ("" : the roots), each closed (``lazy`` when it
    has children), at most ``CHILD_PAGE`` of them and a gap for the rest."""
    kids = view.kids.get(parent_key, [])
    lo = max(0, lo)
    hi = len(kids) if hi is None else max(lo, min(hi, len(kids)))
    out: list[Node | Gap] = []
    for i in range(lo, min(hi, lo + CHILD_PAGE)):
        _label(kids[i], view.linked)
        # a copy: the view (cached, shared with the page) keeps the flags it was sent with
        out.append(replace(kids[i], open=False, lazy=kids[i].key in view.kids))
    if hi > lo + CHILD_PAGE:
        out.append(Gap(parent_key, kids[lo].depth, lo + CHILD_PAGE, hi))
    return out


def label(view: View, node: Node) -> None:
    """Name ``node`` (kind, title, details, marks) if it was not yet (a partial tree labels the rows it sends)."""
    _label(node, view.linked)


def ancestors(view: View, key: str) -> list[Node]:
    """``key``'s node's ancestors, the root first (for a subtree page's breadcrumb), labelled."""
    chain: list[Node] = []
    node = view.by_key.get(key)
    while node is not None and node.parent_key and len(chain) < 1000:
        node = view.by_key.get(node.parent_key)
        if node is not None:
            _label(node, view.linked)
            chain.insert(0, node)
    return chain


def minimap(nodes: list[Node], t0: int, t1: int, window: Window) -> Minimap:
    """Every span as a line in tree order; past ``MINIMAP_ROWS`` spans, each line is a band of consecutive rows
    drawn from its earliest start to its latest end (a problem in the band marks it; a span in progress, drawn
    to the last activity, marks it running)."""
    scale = WIDTH / max(t1 - t0, 1)
    per = max(1, -(-len(nodes) // MINIMAP_ROWS))
    bars: list[tuple[float, int, float, bool]] = []
    running: list[int] = []
    for y, i in enumerate(range(0, len(nodes), per)):
        band = nodes[i : i + per]
        s, e = min(n.start for n in band), max(n.end for n in band)
        x = round((s - t0) * scale, 1)
        bars.append((x, y, round(max((e - s) * scale, 2.0), 1), any(n.problem for n in band)))
        if any(n.running for n in band):
            running.append(y)
    return Minimap(bars, max(len(bars), 1), round(window.lo * WIDTH, 1), round(window.hi * WIDTH, 1), running)


def axis(t0: int, t1: int, n: int = 5, offset_ns: int = 0) -> list[tuple[float, str]]:
    """Tick positions (percent of the waterfall) and labels from the start of the trace."""
    total_ms = (t1 - t0) / 1e6
    off = offset_ns / 1e6
    return [(round(100 * i / (n - 1), 2), fmt_ms(off + total_ms * i / (n - 1))) for i in range(n)]


__all__ = [
    "MAX_TREE", "WHOLE_TREE", "Gap", "Minimap", "Node", "View", "Window", "ancestors", "axis", "build", "children",
    "label", "linked_keys", "node_key",
]  # fmt: skip
