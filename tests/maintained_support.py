"""Build OTLP span and log requests of several conventions for the maintained-state tests, and compare the
maintained runs with the query-time SQL."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_agent.store.database import store_cursor
from otel_agent.store.statements import statement
from tests.otlp_builders import kvs, resource_scope

T0 = 1_780_000_000_000_000_000


def span(
    trace: int,
    span_no: int,
    parent: int | None,
    name: str,
    attrs: dict[str, Any],
    *,
    start: int = 0,
    end: int | None = None,
    error: str | None = None,
    exception: str | None = None,
    events: Sequence[tuple[str, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """One span as a dict (ids derived from the numbers; times in ns after T0)."""
    return {
        "trace_id": trace.to_bytes(16, "big"),
        "span_id": (trace * 1000 + span_no).to_bytes(8, "big"),
        "parent_span_id": (trace * 1000 + parent).to_bytes(8, "big") if parent is not None else b"",
        "name": name,
        "attributes": attrs,
        "start": T0 + trace * 10_000_000 + start,
        "end": T0 + trace * 10_000_000 + (end if end is not None else start + 5_000_000),
        "error": error,
        "exception": exception,
        "events": list(events),
    }


def trace_request(spans: Sequence[dict[str, Any]], service: str = "svc") -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    _, ss = resource_scope(req, service, "tests")
    for sp in spans:
        s = ss.spans.add()
        s.trace_id, s.span_id = sp["trace_id"], sp["span_id"]
        if sp["parent_span_id"]:
            s.parent_span_id = sp["parent_span_id"]
        s.name = sp["name"]
        s.kind = 1
        s.start_time_unix_nano, s.end_time_unix_nano = sp["start"], sp["end"]
        s.attributes.extend(kvs(sp["attributes"]))
        if sp["error"] is not None:
            s.status.code = 2
            s.status.message = sp["error"]
        if sp["exception"] is not None:
            ev = s.events.add()
            ev.name = "exception"
            ev.time_unix_nano = sp["end"]
            ev.attributes.extend(kvs({"exception.type": sp["exception"], "exception.message": "boom"}))
        for name, attrs in sp.get("events", ()):
            ev = s.events.add()
            ev.name = name
            ev.time_unix_nano = sp["start"] + 1
            ev.attributes.extend(kvs(attrs))
    return req


def exception_log_request(response_id: str, at_ns: int) -> ExportLogsServiceRequest:
    """A gen_ai.client.operation.exception log record with no span context, naming a call by response id."""
    req = ExportLogsServiceRequest()
    _, sl = resource_scope(req, "svc", "tests")
    rec = sl.log_records.add()
    rec.time_unix_nano = at_ns
    rec.event_name = "gen_ai.client.operation.exception"
    rec.attributes.extend(kvs({"gen_ai.response.id": response_id, "exception.type": "RateLimitError"}))
    return req


def post(base_url: str, request: Any) -> None:
    path = "/v1/logs" if isinstance(request, ExportLogsServiceRequest) else "/v1/traces"
    reply = requests.post(
        base_url + path,
        data=request.SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=30,
    )
    assert reply.status_code == 200, reply.text


def stored_seq(con: Any) -> int:
    """The newest ``ingest_seq`` of any stored row (0: none)."""
    with store_cursor(con) as cur:
        sql = " UNION ALL ".join(f"SELECT max(ingest_seq) AS s FROM {t}" for t in ("spans", "span_events", "logs"))
        return int(cur.execute(f"SELECT coalesce(max(s), 0) FROM ({sql})").fetchall()[0][0])


def wait_maintained(base_url: str, con: Any, timeout_s: float = 60.0) -> dict[str, Any]:
    """/healthz's ``derived`` once the maintained state has folded every row stored now and the runs view reads
    it (fails after ``timeout_s``: a hang, not a speed bound)."""
    deadline = time.monotonic() + timeout_s
    committed = stored_seq(con)
    while True:
        derived = requests.get(base_url + "/healthz", timeout=10).json()["derived"]
        if derived["ready"] and derived["seq"] >= committed and derived["errors"] == 0:
            return derived
        assert derived["errors"] == 0, derived["last_error"]
        assert time.monotonic() < deadline, derived
        time.sleep(0.05)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def runs_both_ways(con: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The runs view (maintained, where the state is ready) and runs_for_run(NULL) (from raw), sorted by run."""
    with store_cursor(con) as cur:
        out = []
        for sql in ("SELECT * FROM runs ORDER BY run_id", "SELECT * FROM runs_for_run(NULL) ORDER BY run_id"):
            executed = cur.execute(sql)
            names = [d[0] for d in executed.description]
            out.append([dict(zip(names, row, strict=True)) for row in executed.fetchall()])
    return out[0], out[1]


def assert_same_runs(con: Any) -> list[dict[str, Any]]:
    """The maintained runs equal the query-time ones, row by row and column by column (doubles to 1e-9: a sum's
    last bits depend on the order DuckDB adds in), and so do the health views (``assert_same_health``); returns
    the runs."""
    maintained, computed = runs_both_ways(con)
    assert [r["run_id"] for r in maintained] == [r["run_id"] for r in computed]
    for m, c in zip(maintained, computed, strict=True):
        differ = {k: (m[k], c[k]) for k in c if not _close(m[k], c[k])}
        assert not differ, (m["run_id"], differ)
    assert_same_health(con)
    return maintained


HEALTH = (
    "SELECT * FROM provider_health ORDER BY ALL",
    "SELECT * FROM skill_health ORDER BY ALL",
    "SELECT * FROM tool_usage ORDER BY ALL",
    # a window that cuts through the scenario's traces (T0 + 3.5e7 ns .. T0 + 2.5e8 ns)
    f"SELECT * FROM provider_health_between(make_timestamp_ns({T0 + 35_000_000}), "
    f"make_timestamp_ns({T0 + 250_000_000})) ORDER BY ALL",
    f"SELECT * FROM tool_usage_between(make_timestamp_ns({T0 + 35_000_000}), NULL) ORDER BY ALL",
    "SELECT * FROM proxy_health ORDER BY ALL",
    "SELECT * FROM run_metrics ORDER BY ALL",
    f"SELECT * FROM proxy_health_between(make_timestamp_ns({T0 + 35_000_000}), NULL) ORDER BY ALL",
    "SELECT * FROM receipt_transition_spans ORDER BY ALL",
    # receipts as of two times: while the scenario's work is fresh, and long after (windows passed)
    f"SELECT * FROM receipt_state_at(CAST(make_timestamp_ns({T0 + 80_000_000}) AS TIMESTAMP)) ORDER BY ALL",
    f"SELECT * FROM receipt_attempts_at(CAST(make_timestamp_ns({T0 + 10**13}) AS TIMESTAMP)) ORDER BY ALL",
)
"""The aggregate views compared by ``assert_same_health``: they read the maintained facts and receipt candidates."""

SWITCHED = ("oa_health_facts", "oa_receipt_candidates", "oa_proxy_facts")
"""The macros that read the maintained state once it is current (store/maintenance/runs_view.sql); each has a
query-time twin named ``<name>_computed``."""
RUN_METRICS_COMPUTED = (
    "CREATE OR REPLACE TEMP MACRO oa_run_metrics_base_for_run(rid) AS TABLE "
    "SELECT * FROM oa_run_metrics_base_computed(rid)"
)
"""The same for a run's metrics (``run_summary``, ``run_proxy_metrics``): the query-time twin, as a TEMP macro."""


def health_both_ways(con: Any) -> list[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """Each ``HEALTH`` query's rows as the store answers it (over the maintained facts where the state is current)
    and from raw (oa_health_facts() shadowed by its query-time definition on a second cursor)."""
    with store_cursor(con) as fast, store_cursor(con) as slow:
        for name in SWITCHED:
            slow.execute(f"CREATE OR REPLACE TEMP MACRO {name}() AS TABLE SELECT * FROM {name}_computed()")
        slow.execute(RUN_METRICS_COMPUTED)
        return [(fast.execute(sql).fetchall(), slow.execute(sql).fetchall()) for sql in HEALTH]


def assert_same_health(con: Any) -> None:
    """provider_health, skill_health, tool_usage (all time and windowed) and the receipt views equal their
    query-time rows."""
    for sql, (a, b) in zip(HEALTH, health_both_ways(con), strict=True):
        assert len(a) == len(b), (sql, a, b)
        for x, y in zip(a, b, strict=True):
            assert all(_close(p, q) for p, q in zip(x, y, strict=True)), (sql, x, y)


PER_RUN = ("classified_spans_for_run", "run_metrics_for_run", "cost_breakdown_for_run", "runs_for_run")
"""Per-run macros compared by ``assert_same_run_views``: each reads a run's spans through oa_scoped_spans."""


def _query_time_scope(cur: Any) -> None:
    """Shadow the store's oa_scoped_spans (the maintained one, store/maintenance/scoped_spans.sql) on ``cur`` with
    the query-time definition of views/runs/020_span_fields.sql, and its run metrics with their computation, as
    TEMP macros."""
    cur.execute(RUN_METRICS_COMPUTED)
    for part in cur.extract_statements(statement("views/runs/span_fields")):
        if "MACRO oa_scoped_spans" in part.query:
            cur.execute(part.query.replace("CREATE OR REPLACE MACRO", "CREATE OR REPLACE TEMP MACRO", 1))
            return
    raise AssertionError("views/runs/020_span_fields.sql defines no oa_scoped_spans")


def assert_same_run_views(con: Any, run_ids: Sequence[str]) -> None:
    """Each run's per-run views read through the maintained scope give the rows of the query-time scope."""
    with store_cursor(con) as fast, store_cursor(con) as slow:
        _query_time_scope(slow)
        for rid in run_ids:
            for macro in PER_RUN:
                sql = f"SELECT * FROM {macro}(?) ORDER BY ALL"
                a, b = fast.execute(sql, [rid]).fetchall(), slow.execute(sql, [rid]).fetchall()
                assert len(a) == len(b), (macro, rid, len(a), len(b))
                for x, y in zip(a, b, strict=True):
                    assert all(_close(p, q) for p, q in zip(x, y, strict=True)), (macro, rid, x, y)
