"""The read layer's own contracts: every named query binds against a new store (its views, macros and
parameters exist), a remote source's positional parameters are the named ones, the public view list is the
documents', and one wording of money and unpriced calls serves every face."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from otel_agent.read import words
from otel_agent.read.runs import scope_run
from otel_agent.read.schema import PUBLIC
from otel_agent.read.source import CursorSource, named, positional, query_names
from otel_agent.read.tree import build, label, trim
from otel_agent.store.database import open_store
from otel_agent.store.shards import open_read_only

ROOT = Path(__file__).resolve().parents[2]
SCOPES = ("run_scope", "health_scope", "runs_filter")  # scripts that prepare a cursor, not queries
RUN_TAILS = ("run_scope_kept", "run_scope_computed")  # run_scope.sql's two tails (read.runs.scope_run)
AFTER_RUN_SCOPE = ("run_settled",)  # reads the run scope's copies and the maintained state


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path_factory.mktemp("read") / "s.duckdb"
    open_store(path).close()
    con = open_read_only([str(path)])
    yield con
    con.close()


@pytest.mark.parametrize("name", [n for n in query_names() if n not in SCOPES + RUN_TAILS + AFTER_RUN_SCOPE])
def test_every_named_query_binds(con: duckdb.DuckDBPyConnection, name: str) -> None:
    cur = con.cursor()
    cur.execute(named("runs_filter"))  # runs_list / runs_chart read its macro
    cur.execute(f"PREPARE q AS {named(name).strip().rstrip(';')}")


@pytest.mark.parametrize("name", SCOPES)
def test_every_scope_runs_on_an_empty_store(con: duckdb.DuckDBPyConnection, name: str) -> None:
    cur = con.cursor()
    cur.execute("SET VARIABLE console_run_id = 'nope'")
    cur.execute("SET VARIABLE console_t0 = NULL")
    cur.execute(named(name))


def test_a_run_scope_and_its_tail_run_on_an_empty_store(con: duckdb.DuckDBPyConnection) -> None:
    q = CursorSource(con.cursor())
    assert scope_run(q, "nope")  # no maintained state: run_scope.sql, then run_scope_computed.sql
    assert q.one("run_summary", {"run_id": "nope"}) is None
    assert q.rows("run_metrics", {"run_id": "nope"}) == []


def test_positional_parameters_are_the_named_ones() -> None:
    sql = "SELECT $a, '$a in a string', $b::INT -- $a in a comment\nFROM t WHERE x = $a LIMIT $limit"
    out, values = positional(sql, {"a": "A", "b": 2, "limit": 5, "unused": 0})
    assert out == "SELECT $1, '$a in a string', $2::INT -- $a in a comment\nFROM t WHERE x = $1 LIMIT $3"
    assert values == ["A", 2, 5]
    con = duckdb.connect()
    assert con.execute("SELECT $1, $2 + 1, $1 || $3", ["x", 1, "y"]).fetchall() == [("x", 2, "xy")]


def test_the_public_views_are_the_documented_ones() -> None:
    documented: set[str] = set()
    for doc in ("views-runs.md", "views-evidence.md"):
        for heading in re.findall(r"^### (.+)$", (ROOT / "docs" / doc).read_text(), re.M):
            documented |= {n for n in re.findall(r"`([a-z_]+)`", heading) if not n.endswith("_at")}
            documented -= {n for n in re.findall(r"`([a-z_]+)\(", heading)}
    raw = {"spans", "span_events", "span_links", "logs", "metric_points"}
    assert set(PUBLIC) == documented | raw


def test_one_wording_of_money() -> None:
    assert words.cost(0.0045) == "$0.004500"
    assert words.cost(None, "no_price") == "unpriced (no price for this model)"
    assert words.cost(None) == "unknown"
    assert words.unpriced_calls(1) == "+1 unpriced call"
    assert words.unpriced_calls(0) == ""
    call = {
        "trace_id": "t",
        "span_id": "s",
        "category": "provider_call",
        "provider": "openai",
        "request_model": "house-model-7",
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_missing_reason": "no_price",
    }
    assert label(call).details == ["10→5 tok", "unpriced (no price for this model)"]


def test_the_tree_hangs_spans_under_their_nearest_shown_ancestor_and_trims_to_error_paths() -> None:
    def span(sid: str, parent: str | None, category: str, error: bool = False) -> dict:
        return {"trace_id": "t", "span_id": sid, "parent_span_id": parent, "category": category, "is_error": error}

    rows = [
        span("r", None, "flow_run"),
        span("x", "r", "other"),
        span("s", "x", "step"),
        span("c", "s", "provider_call"),
        span("s2", "r", "step"),
        span("t", "s2", "tool_invocation", True),
    ]
    shown = build(rows, lambda r: r["category"] != "other")
    assert [(n.row["span_id"], n.depth, n.parent_key) for n in shown] == [
        ("r", 0, None),
        ("s", 1, "t:r"),
        ("c", 2, "t:s"),
        ("s2", 1, "t:r"),
        ("t", 2, "t:s2"),
    ]
    kept, left_out = trim(shown, 3)
    assert [n.row["span_id"] for n in kept] == ["r", "s2", "t"]
    assert left_out == 2
    cycle = [span("a", "b", "step"), span("b", "a", "step")]
    # spans whose parents form a cycle are still drawn, each once, from the first one
    assert [(n.row["span_id"], n.depth) for n in build(cycle)] == [("a", 0), ("b", 1)]
