"""``/traces/{trace_id}`` Trace: any trace as tree + waterfall (third-party spans of no recognised run too), and
``/traces/{trace_id}/spans/{span_id}`` the details of one span (attributes, events, links, status, tokens, cost,
captured input/output), as a page or, with ``?fragment=1``, as the panel the run and trace pages load; and
``/traces/{trace_id}/tree?parent=KEY&lo=&hi=`` the children of one node of a tree sent in part (console/tree.py),
as rows for the page's script (``?fragment=1``) or as a page of that subtree (``subtree_response``, which the run
page's ``/runs/{run_id}/tree`` answers with too).

Read: ``read.spans.trace_detail`` and ``read.spans.span_detail``. Templates: templates/trace.html, span.html,
_tree.html, _tree_rows.html, _tree_fragment.html, tree_page.html, _span.html.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console import tree
from otel_agent.console.pages import int_arg, text_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import NotFoundError
from otel_agent.read.search import find_in_traces
from otel_agent.read.spans import span_detail, trace_detail


async def span_page(request: Request, console: Any, viewer: Viewer) -> Response:
    trace_id, span_id = request.path_params["trace_id"], request.path_params["span_id"]
    details = await console.store.load(lambda q: span_detail(q, trace_id, span_id))
    if details is None:
        raise NotFoundError(f"no span {span_id!r} in trace {trace_id!r}")
    if request.query_params.get("fragment"):
        return console.html(request, viewer, "_span.html", d=details, data=details)
    return console.html(request, viewer, "span.html", active="runs", d=details, data=details)


class ViewCache:
    """The trees built lately, by the read result they were built from (the same object while the console's
    result cache holds it) and the page's arguments: opening a node of a big tree asks for its children, and
    building a 10,000-span tree again for each would cost ~0.3 s. The views are shared: nothing may change them
    (``tree.children`` returns copies)."""

    def __init__(self, entries: int = 4) -> None:
        self.entries = entries
        self._data: OrderedDict[tuple[Any, ...], tuple[Any, tree.View]] = OrderedDict()

    def build(self, source: Any, rows: list[dict[str, Any]], linked: set[str], **kw: Any) -> tree.View:
        window = kw["window"]
        key = (id(source), len(rows), window.lo, window.hi, frozenset(kw["found"]), kw["selected"])
        hit = self._data.get(key)
        if hit is not None and hit[0] is source:  # (the source is held, so its id is not reused meanwhile)
            self._data.move_to_end(key)
            return hit[1]
        view = tree.build(rows, linked, **kw)
        self._data[key] = (source, view)
        while len(self._data) > self.entries:
            self._data.popitem(last=False)
        return view


VIEWS = ViewCache()


def _parent_arg(request: Request) -> tuple[str, int, int | None]:
    """``?parent=KEY&lo=&hi=`` of a tree's fragment URL ("-" or nothing: the roots)."""
    parent = request.query_params.get("parent") or ""
    lo = int_arg(request, "lo", 0, 0, 10**9)
    hi = request.query_params.get("hi")
    return ("" if parent == "-" else parent), lo, (int_arg(request, "hi", 0, 0, 10**9) if hi else None)


async def _trace_view(request: Request, console: Any, trace_id: str) -> tuple[Any, tree.View, dict[str, Any]]:
    """The trace's spans (read once per trace and limit, and shared by the page and its fragments through the
    result cache), the selected span, the find-in-trace matches, and their tree."""
    limit = int_arg(request, "limit", tree.MAX_TREE, 50, tree.MAX_TREE)
    selected = request.query_params.get("span")
    find = text_arg(request, "find")
    trace = await console.store.load(lambda q: trace_detail(q, trace_id, limit), key=("trace", trace_id, limit))
    if not trace.spans:
        raise NotFoundError(f"no spans stored for trace {trace_id!r}")
    jobs = {}
    if selected:
        jobs["span"] = console.store.load(lambda q: span_detail(q, trace_id, selected))
    if find:
        jobs["found"] = console.store.load(
            lambda q: sorted(find_in_traces(q, [trace_id], find)), key=("trace-find", trace_id, find)
        )
    done = dict(zip(jobs, await asyncio.gather(*jobs.values()), strict=True))
    data = {"trace": trace, "span": done.get("span"), "found": done.get("found", [])}
    key = tree.node_key(trace_id, selected) if selected else None
    view = VIEWS.build(
        trace, trace.spans[:limit], tree.linked_keys(trace.links),
        window=tree.Window.parse(request.query_params.get("zoom")), found=set(data["found"]), selected=key,
        running=trace.running,
    )  # fmt: skip
    ctx = {
        "trace_id": trace_id, "view": view, "nodes": view.nodes, "axis": view.axis, "more": len(trace.spans) > limit,
        "limit": limit, "links": trace.links, "d": data["span"], "run_ids": trace.run_ids, "data": data,
        "selected": key, "base": f"/traces/{trace_id}", "find": find, "duration_ms": (view.t1 - view.t0) / 1e6,
    }  # fmt: skip
    return trace, view, ctx


async def trace_page(request: Request, console: Any, viewer: Viewer) -> Response:
    _, _, ctx = await _trace_view(request, console, request.path_params["trace_id"])
    return console.html(request, viewer, "trace.html", active="runs", **ctx)


async def trace_tree(request: Request, console: Any, viewer: Viewer) -> Response:
    """``/traces/{trace_id}/tree?parent=KEY&lo=&hi=``: the rows of one node's children (``lo``..``hi``), for
    a tree sent in part; with ``?fragment=1`` the rows alone (the page's script inserts them), else a page of
    that subtree (reading without JavaScript)."""
    _, view, ctx = await _trace_view(request, console, request.path_params["trace_id"])
    return subtree_response(request, console, viewer, view, ctx)


def subtree_response(request: Request, console: Any, viewer: Viewer, view: tree.View, ctx: dict[str, Any]) -> Response:
    """The rows of ``?parent=KEY&lo=&hi=`` (the run page's fragment URL answers with this too)."""
    parent, lo, hi = _parent_arg(request)
    node = view.by_key.get(parent) if parent else None
    if parent and node is None:
        raise NotFoundError(f"no span {parent!r} in this tree")
    rows = tree.children(view, parent, lo, hi)
    data = {"parent": parent, "lo": lo, "keys": [r.key for r in rows if not r.gap]}
    if request.query_params.get("fragment"):
        return console.html(request, viewer, "_tree_fragment.html", **{**ctx, "rows": rows, "data": data})
    chain = tree.ancestors(view, parent) if node else []
    if node is not None:
        tree.label(view, node)
        node = dataclasses.replace(node, open=True, lazy=False)  # (the cached view's node keeps its flags)
    page = {"node": node, "chain": chain, "rows": ([node] if node else []) + rows, "data": data, "lo": lo}
    return console.html(request, viewer, "tree_page.html", active="runs", **{**ctx, **page})


ROUTES = [
    ("/traces/{trace_id}", trace_page, ["GET"], "query"),
    ("/traces/{trace_id}/tree", trace_tree, ["GET"], "query"),
    ("/traces/{trace_id}/spans/{span_id}", span_page, ["GET"], "query"),
]
