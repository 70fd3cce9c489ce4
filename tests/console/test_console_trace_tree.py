"""console/tree.py's partial tree on rows built here (no store: the geometry and the choice of rows are pure
functions of the rows): which rows a big tree sends, its gaps, the worst problems first, a node's children on
demand, and spans in progress drawn to the last activity."""

from __future__ import annotations

from typing import Any

from otel_agent.console import tree

TRACE = "ab" * 16


def row(n: int, parent: int | None, start: int, end: int | None, **fields: Any) -> dict[str, Any]:
    return {"trace_id": TRACE, "span_id": f"{n:016x}", "parent_span_id": f"{parent:016x}" if parent else None,
            "span_name": f"s{n}", "category": "other", "start_ns": start, "end_ns": end, **fields}  # fmt: skip


def k(n: int) -> str:
    return f"{TRACE}:{n:016x}"


def big(children: int = 300, steps: int = 10, **marks: dict[str, Any]) -> list[dict[str, Any]]:
    """A root, ``steps`` steps, ``children`` spans under each; ``marks``: span number → extra fields."""
    rows = [row(1, None, 0, 10_000_000)]
    n = 2
    for s in range(steps):
        step = n
        rows.append(row(step, 1, s * 1000, s * 1000 + 900))
        n += 1
        for c in range(children):
            rows.append(row(n, step, s * 1000 + c, s * 1000 + c + 1, **marks.get(str(n), {})))
            n += 1
    return rows


def sent(view: tree.View) -> list[str]:
    return [r.key for r in view.rows if not r.gap]  # type: ignore[union-attr]


def test_a_small_tree_is_sent_whole() -> None:
    view = tree.build(big(children=100, steps=10))  # 1,011 spans
    assert not view.partial
    assert len(view.rows) == len(view.nodes) == 1011


def test_a_big_tree_sends_its_first_levels_and_the_way_to_its_problems() -> None:
    # step 2 (span 2) holds an error at its 151st child and a retry at its 153rd; step 3 (span 303) nothing
    error, retry = 2 + 151, 2 + 153
    view = tree.build(big(**{str(error): {"is_error": True}, str(retry): {"retry_count": 1}}))
    assert view.partial
    keys = sent(view)
    assert keys[:2] == [k(1), k(2)]
    assert {k(error), k(retry), k(error + 1)} <= set(keys)  # one left out between two sent: sent too
    # the step holding them is open with gaps for the rest; the other steps are closed, their children not sent
    gaps = [r for r in view.rows if r.gap]
    assert [(g.parent_key, g.lo, g.hi) for g in gaps] == [(k(2), 0, 150), (k(2), 153, 300)]  # type: ignore[union-attr]
    assert view.by_key[k(2)].open
    assert view.by_key[k(303)].lazy
    assert not view.by_key[k(303)].open
    assert len(keys) == 1 + 10 + 3
    # on demand: a closed step's children, 100 at a time, then a gap for the rest
    rows = tree.children(view, k(303))
    assert [r.key for r in rows[:-1]] == [k(n) for n in range(304, 404)]
    assert (rows[-1].gap, rows[-1].lo, rows[-1].hi) == (True, 100, 300)  # type: ignore[union-attr]
    # a gap's spans: exactly those
    rows = tree.children(view, k(2), 0, 150)
    assert [r.key for r in rows[:100]] == [k(n) for n in range(3, 103)]
    assert rows[-1].gap
    # copies: the view the page was sent with keeps its flags
    assert tree.children(view, k(1))[0].key == k(2)
    assert view.by_key[k(2)].open


def test_the_worst_problems_come_first_and_at_most_reveal_max_ways_open() -> None:
    marks = {str(n): {"retry_count": 1} for n in range(3, 3 + 2 * tree.REVEAL_MAX, 2)}
    marks[str(3000)] = {"is_error": True}
    view = tree.build(big(**marks))
    assert view.problems[0].key == k(3000)
    assert k(3000) in sent(view)
    revealed_retries = [r for r in view.rows if not r.gap and r.row.get("retry_count")]  # type: ignore[union-attr]
    assert len(revealed_retries) < 2 * tree.REVEAL_MAX  # the rest are marked when their rows come


def test_a_span_in_progress_is_drawn_to_the_last_activity() -> None:
    rows = [row(1, None, 0, 0, in_progress=True), row(2, 1, 100, 500), row(3, 1, 600, 1000)]
    view = tree.build(rows)
    root = view.by_key[k(1)]
    assert root.running
    assert (root.x, root.w) == (0.0, 1000.0)
    assert ("running", "running") in root.marks
    assert view.running == 1
    assert view.minimap.running == [0]
    ended = view.by_key[k(2)]
    assert not ended.running
    assert ended.w == 400.0
