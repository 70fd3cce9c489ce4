"""Graphs drawn on the server as SVG geometry (no script, attributes only, every label escaped by the template):
nodes in columns, edges as curves between them, each node a link. Two graphs use it: a claim's lineage (claim →
citations → evidence → sources, with the conflicts that join it to other claims) and a run's agents (the run,
its agents, the models and tools each used, and the handoffs to other processes' runs)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

COL_W = 230  # a column's width in SVG units
NODE_W = 190
NODE_H = 44
GAP = 14
MAX_PER_COL = 30
LABEL = 24  # characters of a node's label (12 px bold: 24 fit a node's width with its padding)
HEAD_CHARS = 22
"""Characters of a column heading per line: its 11 px bold capitals (letter-spaced, console.css ``.colhead``)
are ~8 units wide each, so 22 fit a node's width (190); a longer heading wraps onto more lines, and the nodes
start below the tallest heading (a heading wider than its column ran into the next one, or out of the box)."""
HEAD_LINE = 14  # a heading line's height


def heading_lines(text: str, width: int = HEAD_CHARS) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (a longer word: cut with "…")."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(_short(word, width))
    return lines or [""]


def _short(text: Any, n: int = LABEL) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass
class GNode:
    key: str
    col: int
    label: str
    sub: str = ""
    href: str = ""
    cls: str = ""
    title: str = ""
    x: float = 0.0
    y: float = 0.0


@dataclass
class GEdge:
    a: str
    b: str
    cls: str = ""
    label: str = ""
    path: str = ""
    lx: float = 0.0
    ly: float = 0.0
    anchor: str = "middle"  # the label's text-anchor


@dataclass
class Graph:
    """Laid-out nodes and edges in a ``width`` × ``height`` box; ``columns``: each column's x and heading
    lines (``heading_lines``; the template draws each line at y 14, 28…)."""

    title: str
    nodes: list[GNode] = field(default_factory=list)
    edges: list[GEdge] = field(default_factory=list)
    columns: list[tuple[float, list[str]]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    left_out: int = 0

    def add(self, node: GNode) -> None:
        if all(n.key != node.key for n in self.nodes):
            self.nodes.append(node)

    def link(self, a: str, b: str, cls: str = "", label: str = "") -> None:
        if all((e.a, e.b) != (a, b) for e in self.edges):
            self.edges.append(GEdge(a, b, cls, label))

    def layout(self, headings: list[str]) -> Graph:
        by_col: dict[int, list[GNode]] = defaultdict(list)
        for n in self.nodes:
            by_col[n.col].append(n)
        kept: list[GNode] = []
        for nodes in by_col.values():
            self.left_out += max(0, len(nodes) - MAX_PER_COL)
            kept += nodes[:MAX_PER_COL]
        self.nodes = kept
        by_col = defaultdict(list)
        for n in kept:
            by_col[n.col].append(n)
        tallest = max((len(v) for v in by_col.values()), default=1)
        self.columns = [(4 + i * COL_W, heading_lines(h)) for i, h in enumerate(headings)]
        head = 14 + HEAD_LINE * max((len(lines) for _, lines in self.columns), default=1)
        self.height = head + tallest * (NODE_H + GAP)
        self.width = len(headings) * COL_W - (COL_W - NODE_W) + 8
        for col, nodes in by_col.items():
            block = len(nodes) * (NODE_H + GAP) - GAP
            top = head + (self.height - head - block) / 2
            for i, n in enumerate(nodes):
                n.x, n.y = 4 + col * COL_W, round(top + i * (NODE_H + GAP), 1)
        at = {n.key: n for n in kept}
        edges = []
        for e in self.edges:
            a, b = at.get(e.a), at.get(e.b)
            if not a or not b:
                continue
            if a.col == b.col:  # within a column (a conflict between two claims): an arc on the left
                x = a.x
                y1, y2 = a.y + NODE_H / 2, b.y + NODE_H / 2
                e.path = f"M{x},{y1} C{x - 40},{y1} {x - 40},{y2} {x},{y2}"
                e.lx, e.ly = x - 34, (y1 + y2) / 2
            else:
                x1, y1 = a.x + NODE_W, a.y + NODE_H / 2
                x2, y2 = b.x, b.y + NODE_H / 2
                mid = (x1 + x2) / 2
                e.path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
                # ending just before the arrow's end, above it: labels of a fan of edges do not collide, and a
                # long one ("hands off to") runs back over its own edge, not into the node
                e.lx, e.ly, e.anchor = x2 - 6, y2 - 4, "end"
            edges.append(e)
        self.edges = edges
        return self


def lineage_graph(lineage: Any, conflicts: list[dict[str, Any]]) -> Graph:
    """claim → citations → evidence items → sources; conflicts as red nodes beside the claim, joined to every
    claim and evidence item they name (the other claims link to their own pages)."""
    g = Graph("Lineage")
    claim = lineage.claim
    cid = claim["claim_id"]
    g.add(GNode("c:" + cid, 0, _short(claim.get("claim_text") or cid), _short(cid), f"/claims/{quote(cid, safe='')}",
                "claim " + str(claim.get("claim_status") or ""), str(claim.get("claim_text") or cid)))  # fmt: skip
    for c in lineage.citations:
        key = "ct:" + c["citation_id"]
        cls = "citation" + ("" if c.get("supports") else " bad")
        g.add(GNode(key, 1, _short(c.get("citation_text") or c["citation_id"]), str(c.get("citation_status") or ""),
                    f"#cit-{c['citation_id']}", cls, c["citation_id"]))  # fmt: skip
        g.link("c:" + cid, key)
        if c.get("evidence_id"):
            g.link(key, "e:" + c["evidence_id"], "" if c.get("evidence_found") else "missing")
    for e in lineage.evidence:
        g.add(GNode("e:" + e["evidence_id"], 2, _short(e.get("excerpt") or e["evidence_id"]),
                    f"{e['evidence_id']} · {e.get('evidence_status') or ''}", f"#ev-{e['evidence_id']}",
                    "evidence " + str(e.get("evidence_status") or ""), str(e.get("excerpt") or "")))  # fmt: skip
    for p in lineage.paths:
        if p.get("evidence_id") and p.get("source_id"):
            g.link("e:" + p["evidence_id"], "s:" + p["source_id"])
    for s in lineage.sources:
        g.add(GNode("s:" + s["source_id"], 3, _short(s.get("source_title") or s["source_id"]),
                    _short(s.get("source_provider") or s.get("source_url") or "", 30), f"#src-{s['source_id']}",
                    "source", str(s.get("source_url") or s["source_id"])))  # fmt: skip
    for c in conflicts:
        key = "x:" + c["conflict_id"]
        g.add(GNode(key, 0, _short(c.get("description") or c["conflict_id"]),
                    f"conflict · {c.get('severity') or '?'} · {c.get('status') or ''}", f"#conf-{c['conflict_id']}",
                    "conflict", str(c.get("description") or "")))  # fmt: skip
        for other in c.get("claim_ids") or []:
            if other != cid:
                g.add(GNode("c:" + other, 0, _short(other), "another claim", f"/claims/{quote(str(other), safe='')}",
                            "claim other", str(other)))  # fmt: skip
            g.link(key, "c:" + other, "conflict", "")
        for ev in c.get("evidence_ids") or []:
            if any(n.key == "e:" + ev for n in g.nodes):
                g.link(key, "e:" + ev, "conflict")
    # conflicts and other claims in the claim column: the conflict arcs join nodes of one column
    return g.layout(["Claims and conflicts", "Citations", "Evidence", "Sources"])


def agents_graph(run: dict[str, Any], rows: list[dict[str, Any]], links: list[dict[str, Any]]) -> Graph:
    """The run → its agents → the models and tools each agent's spans called (with counts, errors in red) and
    the runs of other processes its spans hand off to or are linked from. Each node links to the run's tree
    found on it (``?find=``), or to the other run."""
    g = Graph("Agents")
    run_id = run["run_id"]
    base = f"/runs/{quote(run_id, safe='')}"

    def find(text: str) -> str:
        return base + "?" + urlencode({"find": text})

    g.add(GNode("run", 0, _short(run.get("workflow_name") or run_id), _short(run_id), base, "run", run_id))
    by_span = {r["span_id"]: r for r in rows}
    agent_of: dict[str, str] = {}

    def agent(r: dict[str, Any]) -> str:
        seen = []
        cur: dict[str, Any] | None = r
        while cur is not None and cur["span_id"] not in agent_of and len(seen) < 200:
            if cur.get("agent_name"):
                break
            seen.append(cur["span_id"])
            cur = by_span.get(cur.get("parent_span_id") or "")
        name = (cur.get("agent_name") if cur else None) or (agent_of.get(cur["span_id"]) if cur else None)
        name = name or run.get("agent_name") or run.get("workflow_name") or "agent"
        for s in seen:
            agent_of[s] = str(name)
        return str(name)

    uses: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        cat = r.get("category")
        if cat not in ("provider_call", "tool_invocation"):
            continue
        a = agent(r)
        g.add(GNode("a:" + a, 1, _short(a), "agent", find(a), "agent", a))
        g.link("run", "a:" + a)
        if cat == "provider_call":
            model = f"{r.get('provider') or '?'}/{r.get('request_model') or r.get('response_model') or '?'}"
            key, target = "m:" + model, GNode("m:" + model, 2, _short(model), "model", find(str(r.get("request_model")
                                              or model)), "model", model)  # fmt: skip
        else:
            tool = str(r.get("tool_name") or r.get("span_name") or "tool")
            key, target = "t:" + tool, GNode("t:" + tool, 2, _short(tool), "tool", find(tool), "tool", tool)
        g.add(target)
        uses[("a:" + a, key)][0] += 1
        uses[("a:" + a, key)][1] += 1 if r.get("is_error") else 0
    for (a_key, key), (n, errors) in uses.items():
        g.link(a_key, key, "bad" if errors else "", f"{n}×" + (f" · {errors} failed" if errors else ""))
    for lk in links:
        other = str(lk.get("other_run_id") or lk.get("other_trace_id"))
        here = by_span.get(lk.get("span_id") or "")
        a = agent(here) if here else (run.get("agent_name") or "agent")
        g.add(GNode("a:" + a, 1, _short(a), "agent", find(a), "agent", a))
        g.link("run", "a:" + a)
        g.add(GNode("r:" + other, 2, _short(lk.get("other_name") or other), _short(lk.get("other_service") or other),
                    f"/runs/{quote(other, safe='')}", "handoff", other))  # fmt: skip
        g.link("a:" + a, "r:" + other, "handoff", "hands off to" if lk.get("direction") == "in" else "links to")
    return g.layout(["Run", "Agents", "Models, tools, other processes"])
