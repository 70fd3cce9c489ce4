"""A run's or trace's spans as tree rows beside a waterfall: depth-first order, depth, bar geometry, label and
marks (errors, retries, fallbacks, guard blocks, handoff links). Presentation only: every number comes from the
views (oa_priced rows of run_spans.sql)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from otel_agent.console.render import fmt_ms, fmt_usd

WIDTH = 1000  # the waterfall's SVG viewBox width
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


def node_key(trace_id: str, span_id: str) -> str:
    return f"{trace_id}:{span_id}"


def _label(node: Node) -> None:
    r = node.row
    cat = r.get("category") or "other"
    node.kind = {"flow_run": "run", "skill_invocation": "skill", "provider_call": "call", "tool_invocation": "tool",
                 "guard_result": "guard", "verifier_result": "verify"}.get(cat, cat)  # fmt: skip
    title = r.get("span_name") or ""
    meta: list[str] = []
    if cat == "flow_run":
        title = r.get("workflow_name") or title
    elif cat == "step":
        title = r.get("step_name") or title
    elif cat == "skill_invocation":
        title = f"{r.get('skill_name') or title}@{r.get('skill_version') or '?'}"
    elif cat == "provider_call":
        model = r.get("request_model") or "?"
        title = f"{r.get('provider') or '?'}/{model}"
        if r.get("input_tokens") is not None or r.get("output_tokens") is not None:
            meta.append(f"{r.get('input_tokens') or 0}→{r.get('output_tokens') or 0} tok")
        if r.get("cost_usd") is not None:
            meta.append(fmt_usd(r["cost_usd"]))
        elif r.get("cost_missing_reason"):
            meta.append(f"unpriced ({r['cost_missing_reason']})")
        if r.get("nested_call"):
            meta.append("seen twice, not counted")
    elif cat == "tool_invocation":
        title = r.get("tool_name") or title
        if r.get("tool_provider"):
            meta.append(str(r["tool_provider"]))
    elif cat == "guard_result":
        title = f"{r.get('guard_name') or title}: {r.get('guard_outcome') or 'no outcome'}"
        if r.get("guard_reason"):
            meta.append(str(r["guard_reason"]))
    elif cat == "verifier_result":
        title = f"{r.get('verifier_name') or title}: {r.get('verifier_outcome') or 'no outcome'}"
        if r.get("verifier_score") is not None:
            meta.append(f"score {float(r['verifier_score']):g}")
    elif cat == "handoff":
        what = r.get("receipt_transition") or "handoff"
        title = f"{what} → {r.get('handoff_to') or '?'}"
    elif cat == "record":
        kind = r.get("record_kind") or "record"
        node.kind = kind.replace("_", " ")
        title = str(r.get("record_id") or title)
        if kind == "artifact_version" and r.get("artifact_id"):
            title = f"{r['artifact_id']} v{r.get('artifact_version_number') or '?'}"
            node.record_href = RECORD_PAGES["artifact"] + str(r["artifact_id"])
        elif kind == "artifact" and r.get("artifact_id"):
            node.record_href = RECORD_PAGES["artifact"] + str(r["artifact_id"])
        elif kind == "claim" and r.get("record_id"):
            node.record_href = RECORD_PAGES["claim"] + str(r["record_id"])
    node.title = title
    node.meta = meta
    if r.get("is_error"):
        node.marks.append(("err", r.get("error_type") or "error"))
    if r.get("retry_count"):
        node.marks.append(("retry", f"{int(r['retry_count'])} retry"))
    if r.get("fallback_count"):
        node.marks.append(("fallback", f"fallback from {r.get('fallback_from_provider') or '?'}"))
    if r.get("guard_outcome") == "blocked":
        node.marks.append(("blocked", "blocked"))


def build(rows: list[dict[str, Any]], linked: set[str] | None = None) -> tuple[list[Node], int, int]:
    """(nodes in tree order, t0 ns, t1 ns). Spans hang under their stored parent; the others are roots."""
    linked = linked or set()
    keys = {node_key(r["trace_id"], r["span_id"]) for r in rows}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        parent = r.get("parent_span_id")
        pkey = node_key(r["trace_id"], parent) if parent else None
        children.setdefault(pkey if pkey in keys else None, []).append(r)
    starts = [r["start_ns"] for r in rows if r.get("start_ns") is not None]
    ends = [r["end_ns"] for r in rows if r.get("end_ns") is not None]
    t0 = min(starts) if starts else 0
    t1 = max(ends) if ends else t0 + 1
    scale = WIDTH / max(t1 - t0, 1)
    out: list[Node] = []
    seen: set[str] = set()
    stack: list[tuple[dict[str, Any], int, str | None]] = [(r, 0, None) for r in reversed(children.get(None, []))]
    while stack:
        r, depth, pkey = stack.pop()
        key = node_key(r["trace_id"], r["span_id"])
        if key in seen:
            continue
        seen.add(key)
        kids = children.get(key, [])
        node = Node(r, depth, key, pkey, has_children=bool(kids))
        start = r.get("start_ns") or t0
        end = r.get("end_ns") or start
        node.x = round((start - t0) * scale, 2)
        node.w = round(max((end - start) * scale, 3.0), 2)
        _label(node)
        if key in linked:
            node.marks.append(("link", "handoff link"))
        out.append(node)
        stack.extend((k, min(depth + 1, 10), key) for k in reversed(kids))
    return out, t0, t1


def axis(t0: int, t1: int, n: int = 5) -> list[tuple[float, str]]:
    """Tick positions (percent of the waterfall) and labels from the start."""
    total_ms = (t1 - t0) / 1e6
    return [(round(100 * i / (n - 1), 2), fmt_ms(total_ms * i / (n - 1))) for i in range(n)]
