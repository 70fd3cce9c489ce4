"""A run's or trace's spans as tree rows beside a waterfall: the one span-tree model (``read.tree.build``: order,
depth, parents) and its labels (``read.tree.label``), with the waterfall's bar geometry and the links to record
pages. Presentation only: every number comes from the views (``run_spans_for_run`` rows, read/sql/run_spans.sql)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otel_agent.console.render import fmt_ms, fmt_usd
from otel_agent.read import tree as model
from otel_agent.read.tree import node_key

WIDTH = 1000  # the waterfall's SVG viewBox width
MAX_INDENT = 10
RECORD_PAGES = {"claim": "/claims/", "artifact": "/artifacts/"}


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


def _label(node: Node) -> None:
    r = node.row
    found = model.label(r, fmt_usd)
    node.kind, node.title, node.meta, node.marks = found.kind, found.title, found.details, found.marks
    if (r.get("category") or "other") == "record":
        kind = r.get("record_kind") or "record"
        if kind in ("artifact_version", "artifact") and r.get("artifact_id"):
            node.record_href = RECORD_PAGES["artifact"] + str(r["artifact_id"])
        elif kind == "claim" and r.get("record_id"):
            node.record_href = RECORD_PAGES["claim"] + str(r["record_id"])


def build(rows: list[dict[str, Any]], linked: set[str] | None = None) -> tuple[list[Node], int, int]:
    """(nodes in tree order, t0 ns, t1 ns). Spans hang under their stored parent; the others are roots."""
    linked = linked or set()
    starts = [r["start_ns"] for r in rows if r.get("start_ns") is not None]
    ends = [r["end_ns"] for r in rows if r.get("end_ns") is not None]
    t0 = min(starts) if starts else 0
    t1 = max(ends) if ends else t0 + 1
    scale = WIDTH / max(t1 - t0, 1)
    out: list[Node] = []
    for span in model.build(rows):
        r = span.row
        node = Node(r, min(span.depth, MAX_INDENT), span.key, span.parent_key, has_children=span.has_children)
        start = r.get("start_ns") or t0
        end = r.get("end_ns") or start
        node.x = round((start - t0) * scale, 2)
        node.w = round(max((end - start) * scale, 3.0), 2)
        _label(node)
        if span.key in linked:
            node.marks.append(("link", "handoff link"))
        out.append(node)
    return out, t0, t1


def axis(t0: int, t1: int, n: int = 5) -> list[tuple[float, str]]:
    """Tick positions (percent of the waterfall) and labels from the start."""
    total_ms = (t1 - t0) / 1e6
    return [(round(100 * i / (n - 1), 2), fmt_ms(total_ms * i / (n - 1))) for i in range(n)]


__all__ = ["Node", "axis", "build", "node_key"]
