"""Runs and their trees: search, a run's page (summary, spans, links, metrics, cost, timeline), its errors with
their origin, and the CLI's tables of runs, metrics, cost and the workflow manifest. Everything reads the public
run views (docs/views-runs.md: ``runs``, ``runs_for_run``, ``run_spans_for_run``, ``run_metrics_for_run``,
``cost_breakdown_for_run``, ``run_timeline_for_run``, ``classified_spans_for_run``; docs/views-evidence.md:
``workflow_manifest_for_run``, ``business_timeline_for_run``).

On a source that can be scoped (a DuckDB cursor), a run's queries first classify the run once
(``read/sql/run_scope.sql``); over a receiver's query API they read the same views unscoped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from otel_agent.read.source import CursorSource, Source, Table, named
from otel_agent.store.maintained import reads_maintained_runs

SORTS = ("start", "duration", "cost", "calls", "tokens", "errors")
STATUSES = ("ok", "error", "running", "abandoned")
MAX_TREE = 5000


@dataclass(frozen=True)
class RunFilter:
    """Which runs: each field None does not filter (``runs_filter.sql``)."""

    status: str | None = None
    service: str | None = None
    text: str | None = None
    t0: Any = None
    t1: Any = None
    agent: str | None = None
    min_cost: float | None = None
    only_errors: bool | None = None
    run_id: str | None = None
    """One run by its id, exactly (the console's live run page asks for its own row: no text search)."""

    def params(self) -> dict[str, Any]:
        return {
            "status": self.status, "service": self.service, "text": self.text, "t0": self.t0, "t1": self.t1,
            "agent": self.agent, "min_cost": self.min_cost, "only_errors": self.only_errors, "run": self.run_id,
        }  # fmt: skip


_MACRO_ARGS = {
    "want_status": "$status", "want_service": "$service", "want_text": "$text", "t0": "$t0", "t1": "$t1",
    "want_agent": "$agent", "min_cost": "$min_cost", "only_errors": "$only_errors", "want_run": "$run",
}  # fmt: skip
_CALL = "runs_matching($status, $service, $text, $t0, $t1, $agent, $min_cost, $only_errors, $run)"


def _unscoped(name: str) -> str:
    """``name``'s query with the ``runs_matching`` macro call replaced by the macro's body (a source without
    TEMP macros: a receiver's query API)."""
    macro = named("runs_filter")
    body = macro[macro.index("AS TABLE") + len("AS TABLE") :].strip().rstrip(";")
    body = re.sub(r"\b(" + "|".join(_MACRO_ARGS) + r")\b", lambda m: _MACRO_ARGS[m[1]], body)
    return named(name).replace(_CALL, f"({body})")


def reads_maintained(src: CursorSource) -> bool:
    """Whether the runs view this cursor reads is over the maintained rows (store/maintained.py): a page of
    runs then costs what it shows, so it can be read live instead of from a snapshot."""
    return bool(reads_maintained_runs(src.cursor))


def _filtered(src: Source, name: str) -> str:
    return name if src.scope("runs_filter") else _unscoped(name)


@dataclass
class RunsPage:
    """One page of runs (``rows``: runs_list.sql's columns, one more than asked when more exist), the chart's
    buckets and the services to filter by."""

    rows: list[dict[str, Any]]
    buckets: list[dict[str, Any]] = field(default_factory=list)
    services: list[str] = field(default_factory=list)


def search_runs(
    src: Source, where: RunFilter, *, sort: str = "start", desc: bool = True, limit: int = 50, offset: int = 0,
    chart: bool = False,
) -> RunsPage:  # fmt: skip
    """Runs matching ``where``, sorted (``SORTS``), ``limit`` + 1 rows from ``offset``; with ``chart``, the
    buckets of runs, cost and errors over time and the services too."""
    params = {**where.params(), "sort": sort if sort in SORTS else "start", "desc": desc}
    rows = src.rows(_filtered(src, "runs_list"), {**params, "limit": limit + 1, "offset": offset}, max_rows=limit + 1)
    if not chart:
        return RunsPage(rows)
    buckets = src.rows(_filtered(src, "runs_chart"), where.params())
    services = [r["service_name"] for r in src.rows("runs_services")]
    return RunsPage(rows, buckets, services)


RUNS_TABLE_SQL = """
SELECT run_id, workflow_name AS workflow, status, start_time, round(duration_ms / 1000, 3) AS duration_s,
       steps, provider_calls AS calls, tool_invocations AS tools, input_tokens AS tokens_in,
       output_tokens AS tokens_out, round(cost_usd, 6) AS cost_usd, unpriced_calls AS unpriced,
       guard_blocks AS blocks, errors, budget_exceeded
FROM runs
WHERE ($status::VARCHAR IS NULL OR status = $status::VARCHAR)
ORDER BY start_time DESC, run_id
LIMIT $limit
"""


def runs_table(src: Source, status: str | None, limit: int, max_rows: int) -> Table:
    """Recent runs as ``otel-agent runs`` lists them."""
    return src.table(RUNS_TABLE_SQL, {"status": status, "limit": limit}, max_rows=max_rows)


def run_summary(src: Source, run_id: str) -> dict[str, Any] | None:
    """The run's row of ``runs_for_run`` (None: no such run)."""
    return src.one("run_summary", {"run_id": run_id})


def run_exists(src: Source, run_id: str) -> bool:
    return src.one("SELECT 1 AS found FROM runs_for_run($run_id) LIMIT 1", {"run_id": run_id}) is not None


def run_spans(
    src: Source, run_id: str, trace_id: str | None = None, limit: int = MAX_TREE, max_rows: int | None = None
) -> Table:
    """The run's spans for a tree (``run_spans_for_run`` in start order, with epoch-ns times ``start_ns`` and
    ``end_ns``), at most ``limit`` read and ``max_rows`` kept (then ``truncated``); ``trace_id``: only its."""
    params = {"run_id": run_id, "trace_id": trace_id, "limit": limit}
    return src.table("run_spans", params, max_rows=limit if max_rows is None else max_rows)


def record_details(src: Source, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(kind, id) → label and text of the run's evidence items and claims (what a tree prints under a step)."""
    rows = src.rows("run_record_details", {"run_id": run_id})
    return {(r["kind"], r["id"]): r for r in rows}


@dataclass
class RunDetail:
    """A run's page: its ``run`` row, its ``spans`` (``limit`` + 1 when more exist), the ``traces`` it spans,
    handoff ``links`` to other traces, derived ``metrics``, ``cost`` rows and business ``timeline``."""

    run: dict[str, Any]
    spans: list[dict[str, Any]]
    traces: list[str]
    links: list[dict[str, Any]]
    metrics: list[dict[str, Any]]
    cost: list[dict[str, Any]]
    timeline: list[dict[str, Any]]


def scope_run(src: Source, run_id: str) -> bool:
    """Prepare ``src`` for the queries of one run, where it can be (False: it cannot, and they read unscoped):
    the run's raw rows copied and classified once (run_scope.sql), then its row and metrics read from the
    maintained state when that holds the run as it is now (run_settled.sql → run_scope_kept.sql), else rolled up
    from the copies (run_scope_computed.sql). Only that run's queries may use the cursor afterwards."""
    if not src.scope("run_scope", console_run_id=run_id):
        return False
    # only a cursor scopes; run_settled.sql names the state's tables, so ask first whether the store has them
    ready = isinstance(src, CursorSource) and reads_maintained(src)
    settled = ready and (src.one("run_settled", {"run_id": run_id}) or {}).get("settled")
    src.scope("run_scope_kept" if settled else "run_scope_computed")
    return True


def run_detail(src: Source, run_id: str, limit: int = 500) -> RunDetail | None:
    # One classification of the run for all of its queries, where the source can hold it.
    scope_run(src, run_id)
    run = run_summary(src, run_id)
    if run is None:
        return None
    spans = run_spans(src, run_id, None, limit + 1).dicts()
    traces = sorted({r["trace_id"] for r in spans} | ({run["trace_id"]} if run.get("trace_id") else set()))
    return RunDetail(
        run, spans, traces, src.rows("handoff_links", {"trace_ids": traces}),
        src.rows("run_metrics", {"run_id": run_id}), src.rows("run_cost", {"run_id": run_id}),
        src.rows("run_timeline", {"run_id": run_id}),
    )  # fmt: skip


def run_errors(src: Source, run_id: str, limit: int = 20) -> list[dict[str, Any]]:
    """The run's spans in error, origins first (``is_error_origin``: where a failure began), with the error type,
    message, category and the step, call or tool they belong to."""
    return src.rows("run_errors", {"run_id": run_id, "limit": limit}, max_rows=limit)


def metrics_table(src: Source, run_id: str, max_rows: int) -> Table:
    """A run's derived metrics (labels as typed JSON)."""
    return src.table(
        "SELECT metric, value, unit, labels::JSON AS labels FROM run_metrics_for_run($run_id) "
        "ORDER BY metric, labels NULLS FIRST", {"run_id": run_id}, max_rows=max_rows,
    )  # fmt: skip


COST_SQL = """
SELECT run_id, step_name, skill_ref, item_type, provider, model, tool_name, calls, input_tokens, output_tokens,
       cost_usd, unpriced_calls
FROM cost_breakdown_for_run($run_id::VARCHAR)
ORDER BY cost_usd DESC, run_id, step_name NULLS LAST, skill_ref NULLS LAST, item_type, provider, model, tool_name
LIMIT $limit
"""


def cost_table(src: Source, run_id: str | None, limit: int, max_rows: int) -> Table:
    """Where the money went: cost per run, step, skill, provider/model and tool (``cost_breakdown``)."""
    return src.table(COST_SQL, {"run_id": run_id, "limit": limit}, max_rows=max_rows)


MANIFEST_SQL = "SELECT * FROM workflow_manifest_for_run($run_id)"


def manifest(src: Source, run_id: str) -> dict[str, Any] | None:
    """Seed 001's workflow manifest of one run (``workflow_manifest_for_run``)."""
    return src.one(MANIFEST_SQL, {"run_id": run_id})


BUSINESS_TIMELINE_SQL = """
SELECT seq, time, event, subject, outcome, layer, reason, actor, detail, agent_output, policy_gate, effective,
       iteration, record_id
FROM business_timeline_for_run($run_id)
ORDER BY seq
"""
# What a terminal shows: one line per event, the decision's three parts and the rest folded into one column.
BUSINESS_TIMELINE_SHORT_SQL = """
SELECT seq, strftime(time, '%H:%M:%S.%g') AS time, event, subject, outcome, layer, actor,
       concat_ws('; ', reason, detail, 'agent ' || agent_output, 'policy gate ' || policy_gate,
                 'effective ' || effective) AS why
FROM business_timeline_for_run($run_id)
ORDER BY seq
"""


def business_timeline(src: Source, run_id: str, max_rows: int, short: bool = False) -> Table:
    sql = BUSINESS_TIMELINE_SHORT_SQL if short else BUSINESS_TIMELINE_SQL
    return src.table(sql, {"run_id": run_id}, max_rows=max_rows)
