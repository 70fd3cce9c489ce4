"""The one span-tree model: a run's or trace's spans (rows of ``run_spans_for_run``, or raw spans of a trace)
in depth-first order, each hung under its nearest *shown* stored ancestor (a parent that is hidden, missing or
part of a cycle is skipped), siblings in the rows' order (start time). With every span shown, a span hangs
under its stored parent. The console draws it beside a waterfall, the CLI as text, MCP trims it to a budget.

``label`` names a span the same way on every face: kind, title, details (tokens, cost or why it is unpriced)
and marks (error, retries, fallback, a blocked guard).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from otel_agent.read import words

TREE_CATEGORIES = frozenset(
    {"flow_run", "step", "skill_invocation", "provider_call", "tool_invocation", "guard_result", "verifier_result",
     "retrieval", "handoff"}
)  # fmt: skip
"""What a tree shows by default (the CLI's ``run``; MCP's ``get_run``): the hierarchy and the calls."""
TIMELINE_KINDS = frozenset({"evidence_item", "claim", "artifact_version"})
"""Records drawn under their step by default (issue 15: what a step found, concluded and produced)."""

KINDS = {"flow_run": "run", "skill_invocation": "skill", "provider_call": "call", "tool_invocation": "tool",
         "guard_result": "guard", "verifier_result": "verify"}  # fmt: skip


def node_key(trace_id: str, span_id: str) -> str:
    return f"{trace_id}:{span_id}"


def default_shown(row: dict[str, Any]) -> bool:
    return row.get("category") in TREE_CATEGORIES or row.get("record_kind") in TIMELINE_KINDS


@dataclass
class SpanNode:
    """One span in the tree: its row, depth, key (``trace:span``), its parent's key (None: a root), whether it
    has shown children, and for each level above it whether that ancestor was the last of its siblings
    (``lasts``, the last item: this node's own), which is how a text tree draws its guides."""

    row: dict[str, Any]
    depth: int
    key: str
    parent_key: str | None
    has_children: bool = False
    lasts: tuple[bool, ...] = field(default_factory=tuple)


def build(rows: list[dict[str, Any]], shown: Callable[[dict[str, Any]], bool] | None = None) -> list[SpanNode]:
    """The tree of ``rows`` (all of them, or those ``shown`` accepts) in depth-first order."""
    by_key = {node_key(r["trace_id"], r["span_id"]): r for r in rows}

    def visible(r: dict[str, Any]) -> bool:
        return shown is None or shown(r)

    def shown_parent(r: dict[str, Any]) -> str | None:
        seen: set[str] = set()
        parent = r.get("parent_span_id")
        while parent:
            key = node_key(r["trace_id"], parent)
            if key not in by_key or key in seen:
                return None
            seen.add(key)
            if visible(by_key[key]):
                return key
            parent = by_key[key].get("parent_span_id")
        return None

    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        if visible(r):
            children.setdefault(shown_parent(r), []).append(r)
    out: list[SpanNode] = []
    seen: set[str] = set()

    def walk(roots: list[dict[str, Any]]) -> None:
        stack: list[tuple[dict[str, Any], str | None, tuple[bool, ...]]] = [
            (r, None, (i == len(roots) - 1,)) for i, r in reversed(list(enumerate(roots)))
        ]
        while stack:
            r, parent_key, lasts = stack.pop()
            key = node_key(r["trace_id"], r["span_id"])
            if key in seen:
                continue
            seen.add(key)
            kids = children.get(key, [])
            out.append(SpanNode(r, len(lasts) - 1, key, parent_key, bool(kids), lasts))
            stack.extend((k, key, (*lasts, i == len(kids) - 1)) for i, k in reversed(list(enumerate(kids))))

    walk(children.get(None, []))
    # spans whose parents form a cycle (hostile or broken telemetry) have no root: each is drawn as one
    left = [r for r in rows if visible(r) and node_key(r["trace_id"], r["span_id"]) not in seen]
    while left:
        walk(left[:1])
        left = [r for r in left if node_key(r["trace_id"], r["span_id"]) not in seen]
    return out


def trim(nodes: list[SpanNode], budget: int) -> tuple[list[SpanNode], int]:
    """At most ``budget`` nodes, keeping tree order: every error origin and its ancestors first (where a run
    failed is what a reader asks), then the nodes nearest the root. Returns (kept, how many were left out)."""
    if len(nodes) <= budget:
        return nodes, 0
    by_key = {n.key: n for n in nodes}
    keep: set[str] = set()
    for n in nodes:
        if n.row.get("is_error") and len(keep) < budget:
            key: str | None = n.key
            while key is not None and key not in keep and len(keep) < budget:
                keep.add(key)
                key = by_key[key].parent_key if key in by_key else None
    for n in sorted(nodes, key=lambda n: n.depth):
        if len(keep) >= budget:
            break
        if n.parent_key is None or n.parent_key in keep:
            keep.add(n.key)
    kept = [n for n in nodes if n.key in keep]
    return kept, len(nodes) - len(kept)


@dataclass
class SpanLabel:
    """How a span is named: ``kind`` (run, step, call, tool…), ``title``, ``details`` and ``marks`` ((class,
    text): err, retry, fallback, blocked). Text from telemetry, unescaped: each face escapes it its own way."""

    kind: str
    title: str
    details: list[str] = field(default_factory=list)
    marks: list[tuple[str, str]] = field(default_factory=list)


def label(r: dict[str, Any], money: Callable[[Any], str] = words.usd) -> SpanLabel:
    cat = r.get("category") or "other"
    kind = KINDS.get(cat, cat)
    title = str(r.get("span_name") or "")
    details: list[str] = []
    if cat == "flow_run":
        title = r.get("workflow_name") or title
    elif cat == "step":
        title = r.get("step_name") or title
    elif cat == "skill_invocation":
        title = f"{r.get('skill_name') or title}@{r.get('skill_version') or '?'}"
    elif cat == "provider_call":
        title = f"{r.get('provider') or '?'}/{r.get('request_model') or r.get('response_model') or '?'}"
        if r.get("input_tokens") is not None or r.get("output_tokens") is not None:
            details.append(f"{r.get('input_tokens') or 0}→{r.get('output_tokens') or 0} tok")
        if r.get("cost_usd") is not None or r.get("cost_missing_reason"):
            details.append(words.cost(r.get("cost_usd"), r.get("cost_missing_reason"), money))
        if r.get("nested_call"):
            details.append("seen twice, not counted")
    elif cat == "tool_invocation":
        title = r.get("tool_name") or title
        if r.get("tool_provider"):
            details.append(str(r["tool_provider"]))
    elif cat == "guard_result":
        title = f"{r.get('guard_name') or title}: {r.get('guard_outcome') or 'no outcome'}"
        if r.get("guard_reason"):
            details.append(str(r["guard_reason"]))
    elif cat == "verifier_result":
        title = f"{r.get('verifier_name') or title}: {r.get('verifier_outcome') or 'no outcome'}"
        if r.get("verifier_score") is not None:
            details.append(f"score {float(r['verifier_score']):g}")
    elif cat == "handoff":
        title = f"{r.get('receipt_transition') or 'handoff'} → {r.get('handoff_to') or '?'}"
    elif cat == "record":
        record_kind = r.get("record_kind") or "record"
        kind = record_kind.replace("_", " ")
        title = str(r.get("record_id") or title)
        if record_kind == "artifact_version" and r.get("artifact_id"):
            title = f"{r['artifact_id']} v{r.get('artifact_version_number') or '?'}"
    marks: list[tuple[str, str]] = []
    if r.get("is_error"):
        marks.append(("err", r.get("error_type") or "error"))
    if r.get("retry_count"):
        marks.append(("retry", f"{int(r['retry_count'])} retry"))
    if r.get("fallback_count"):
        marks.append(("fallback", f"fallback from {r.get('fallback_from_provider') or '?'}"))
    if r.get("guard_outcome") == "blocked":
        marks.append(("blocked", "blocked"))
    return SpanLabel(kind, str(title), details, marks)
