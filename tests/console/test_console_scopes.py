"""The read layer's cursor scopes (read/sql/run_scope.sql with either tail, health_scope.sql) give the rows the views
give without them, on the demo store served by a live receiver (the hostile third-party trace included)."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from typing import Any

from otel_agent.read.runs import scope_run
from otel_agent.read.source import CursorSource
from otel_agent.store.database import store_cursor
from tests.console.conftest import XSS_TRACE, Live

RUN_QUERIES = ("run_summary", "run_spans", "run_metrics", "run_cost", "run_timeline")
# proxy_health is read before the health scope (pages/providers.py): it reads the priced run views.
HEALTH_QUERIES = ("providers_health", "skills_health", "tools_usage")


def _canon(value: Any) -> Any:
    """A row's values with floats cut to 12 significant digits: an avg() over the same rows read in another
    order (the scope hands DuckDB fewer rows, so its threads split them differently) differs in the last bit
    (0.044864249999999994 vs 0.04486425), which is not a different row."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_canon(v) for v in value)
    return value


def _rows(
    live: Live, scope: tuple[str, dict[str, Any]] | None, names: tuple[str, ...], params: Callable[[str], dict]
) -> dict:
    """Every query of ``names`` on one cursor (scoped first when ``scope`` is given), as the console's page job
    runs them: the scope script runs once for all of them."""
    with store_cursor(live.receiver.con) as cur:
        q = CursorSource(cur)
        if scope:
            for script in scope[0].split("+"):  # a scope and its tail: "run_scope+run_scope_computed"
                q.scope(script, **scope[1])
        return {n: sorted(repr(_canon(r)) for r in q.rows(n, params(n))) for n in names}


def _run_scoped(live: Live, run_id: str, names: tuple[str, ...], params: Callable[[str], dict]) -> tuple[dict, bool]:
    """The rows as the Run page reads them (read.runs.scope_run: the maintained row and metrics of a settled run),
    and whether the run was read from the maintained state."""
    with store_cursor(live.receiver.con) as cur:
        q = CursorSource(cur)
        assert scope_run(q, run_id)
        kept = bool(q.one("run_settled", {"run_id": run_id})["settled"])  # which tail scope_run took
        return {n: sorted(repr(_canon(r)) for r in q.rows(n, params(n))) for n in names}, kept


def _run_params(name: str, run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "trace_id": None, "limit": 5000} if name == "run_spans" else {"run_id": run_id}


def _window_params(name: str, t0: Any, t1: Any) -> dict[str, Any]:
    return {"t0": t0, "t1": t1}


def test_run_scope_gives_the_views_rows(live: Live) -> None:
    runs = [r[0] for r in live.rows("SELECT run_id FROM runs ORDER BY run_id")] + [XSS_TRACE.hex()]
    assert len(runs) >= 3
    fallbacks = kept = 0
    for run_id in runs:
        params = functools.partial(_run_params, run_id=run_id)
        plain = _rows(live, None, RUN_QUERIES, params)
        # rolled up from the scope's copies, and as the Run page reads it (a settled run: its maintained row and
        # metrics)
        computed = _rows(live, ("run_scope+run_scope_computed", {"console_run_id": run_id}), RUN_QUERIES, params)
        paged, from_state = _run_scoped(live, run_id, RUN_QUERIES, params)
        for name in RUN_QUERIES:
            assert computed[name] == plain[name], (run_id, name)
            assert paged[name] == plain[name], (run_id, name)
        assert plain["run_spans"], run_id  # the run has spans: the comparison is not of two empty lists
        assert plain["run_metrics"], run_id
        fallbacks += str(plain["run_timeline"]).count("'proxy_fallback'")
        kept += from_state
    assert fallbacks  # a timeline row read from span_events: the scoped cursor reads the run's copy of them
    assert kept  # a run the demo's receiver has folded was read from its maintained rows


def test_run_scope_is_what_the_views_read(live: Live) -> None:
    """After the scope, the per-run macros the views call resolve to the cursor's copy (they ignore their
    argument): so the views above read one classification, not their own."""
    run_id = live.rows("SELECT run_id FROM runs ORDER BY run_id LIMIT 1")[0][0]
    with store_cursor(live.receiver.con) as cur:
        q = CursorSource(cur)
        n = q.cursor.execute("SELECT count(*) FROM classified_spans_for_run(?)", [run_id]).fetchall()[0][0]
        assert n > 0
        assert q.cursor.execute("SELECT count(*) FROM oa_priced('no such run')").fetchall()[0][0] == 0
        scope_run(q, run_id)
        for macro in ("oa_classified_spans_for_run", "classified_spans_for_run", "oa_priced"):
            assert q.cursor.execute(f"SELECT count(*) FROM {macro}('no such run')").fetchall()[0][0] == n
        # the raw rows the views read are the run's traces only (span_links and spans stay whole: handoff_links)
        traces = {r[0] for r in live.rows("SELECT trace_id FROM oa_scoped_spans(?)", [run_id])}
        for table in ("oa_scoped_spans('no such run')", "span_events"):
            found = {r[0] for r in q.cursor.execute(f"SELECT DISTINCT trace_id FROM {table}").fetchall()}
            assert found, table
            assert found <= traces, table
        assert len(live.rows("SELECT DISTINCT trace_id FROM span_events")) > len(traces)


def test_health_scope_gives_the_views_rows(live: Live) -> None:
    first, last = live.rows("SELECT min(start_time), max(start_time) FROM spans")[0]
    # Pinned to the data, not to the clock: the last window starts halfway through the demo, so it cuts
    # through spans (and tool spans nested in tools) on every run, not only when the demo ran for over a minute.
    middle = first + (last - first) / 2
    windows = [(None, None), (first, None), (None, last), (middle, last + dt.timedelta(seconds=1))]
    for t0, t1 in windows:
        scope = ("health_scope", {"console_t0": t0, "console_t1": t1})
        for _ in range(3):  # the live receiver may still be committing an earlier test's spans: read again
            params = functools.partial(_window_params, t0=t0, t1=t1)
            plain = _rows(live, None, HEALTH_QUERIES, params)
            scoped = _rows(live, scope, HEALTH_QUERIES, params)
            if scoped == plain == _rows(live, None, HEALTH_QUERIES, params):
                break
        assert scoped == plain, (t0, t1)
    assert plain["providers_health"]  # the last window holds model calls


def test_claim_conflict_keys_find_every_claims_conflicts(live: Live) -> None:
    """The claim page asks claim_conflicts.sql only when claim_conflict_keys.sql finds a conflict naming the claim
    or its evidence: on every claim of the demo store, that is exactly when claim_conflicts.sql has rows."""
    claims = [r[0] for r in live.rows("SELECT DISTINCT record_id FROM spans WHERE record_kind = 'claim'")]
    with store_cursor(live.receiver.con) as cur:
        q = CursorSource(cur)
        with_conflicts = 0
        for claim_id in claims:
            paths = q.rows("claim_lineage", {"claim_id": claim_id})
            evidence_ids = sorted({p["evidence_id"] for p in paths if p.get("evidence_id")})
            conflicts = q.rows("claim_conflicts", {"claim_id": claim_id, "evidence_ids": evidence_ids})
            named = q.one("claim_conflict_keys", {"ids": [claim_id, *evidence_ids]})
            assert (named["n"] > 0) == bool(conflicts), claim_id
            with_conflicts += bool(conflicts)
        assert with_conflicts >= 1  # the demo store's conflict names a claim: not a comparison of empty lists
        assert with_conflicts < len(claims)


class _Unscoped(CursorSource):
    """A cursor source that cannot be scoped (as a receiver's query API): the read functions read unscoped."""

    def scope(self, name: str, **variables: Any) -> bool:
        return False


def test_trace_page_through_its_runs_scope_gives_the_same_tree(live: Live) -> None:
    """read.spans.trace_detail reads a one-run trace through that run's scope: the same rows, runs and links as
    without it, for every trace of the demo store and the hostile trace."""
    from otel_agent.read.spans import trace_detail

    traces = [r[0] for r in live.rows("SELECT DISTINCT trace_id FROM spans ORDER BY trace_id")]
    assert XSS_TRACE.hex() in traces
    for trace_id in traces:
        with store_cursor(live.receiver.con) as a, store_cursor(live.receiver.con) as b:
            scoped, plain = trace_detail(CursorSource(a), trace_id, 5000), trace_detail(_Unscoped(b), trace_id, 5000)
        assert plain.spans, trace_id
        assert sorted(repr(_canon(r)) for r in scoped.spans) == sorted(repr(_canon(r)) for r in plain.spans), trace_id
        assert (scoped.run_ids, scoped.links) == (plain.run_ids, plain.links), trace_id
