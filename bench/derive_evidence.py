"""Benchmark of the evidence model's derived SQL (issue 5 §6) on a large store.

Builds a store of ``--spans`` spans (default 1 M) in the raw schema, shaped like what the receiver writes
(compact JSON attributes, rows in arrival order): research runs (flow run, steps, provider and tool calls,
sources, evidence items, claims, citations, conflicts, a report with two versions) and handoff operations
(100 k by default, 4 transitions each on average, in every receipt state, some retried). Then, on a
read-only connection, it times:

- the lineage of one claim: ``SELECT * FROM claim_lineage_of(?)`` (several claims), and the view filtered;
- ``receipt_state`` over every operation: ``SELECT * FROM receipt_state_at(?)`` fetched whole as Arrow;
- for reference, ``claim_support``, ``artifact_versions`` and ``sources`` whole.

Each figure is the wall time (median, p95, min) and the process CPU time (DuckDB's threads included): on a
shared machine the CPU time is the steadier of the two.

    python bench/derive_evidence.py                      # 1 M spans, 100 k operations, temp file
    python bench/derive_evidence.py --spans 200000 --operations 20000 --db /tmp/b.duckdb --keep
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from otel_agent.fold.promoted import backfill_sql
from otel_agent.store.database import fill_lookup_tables, open_store

T0 = "TIMESTAMP_NS '2026-03-01 00:00:00'"
RUN_SECONDS = 17  # a run starts every 17 s
# Per run: 10 sources, 15 evidence items, 8 claims, 12 citations, 1 artifact + 2 versions, a conflict every
# 5th run (46.2 records) and 71 other spans (flow run, 6 steps, 40 provider calls, 24 tool calls).
RECORDS_PER_RUN = 10 + 15 + 8 + 12 + 3 + 0.2
OTHER_PER_RUN = 72  # … and a GenAI retrieval span (3 documents) of another convention
# Operation mix: (share, transitions): verified 5, orphaned 1, waiting 3, working/stuck 3, failed 4, retried 6.
TRANSITIONS_PER_OP = 0.40 * 5 + 0.10 * 1 + 0.15 * 3 + 0.10 * 3 + 0.15 * 4 + 0.10 * 6

COMMON = """
    trace_id, span_id, NULL AS parent_span_id, NULL AS trace_state, 1::UINTEGER AS flags, name, kind,
    start_time, start_time + to_microseconds(dur_us) AS end_time, dur_us * 1000 AS duration_ns,
    'UNSET' AS status_code, '' AS status_message, attributes::JSON AS attributes,
    0::UINTEGER AS dropped_attributes_count, 0::UINTEGER AS dropped_events_count, 0::UINTEGER AS dropped_links_count,
    service_name, json_object('service.name', service_name)::JSON AS resource_attributes,
    0::UINTEGER AS resource_dropped_attributes_count, 'otel_agent' AS scope_name, '0.1.0' AS scope_version,
    NULL::VARCHAR AS principal, now() AS received_at
"""


def generate(con: duckdb.DuckDBPyConnection, runs: int, operations: int) -> None:
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE g_runs AS SELECT r, {T0} + to_seconds(r * {RUN_SECONDS}) AS t0, "
        f"md5('run' || r) AS tid FROM range({runs}) t(r)"
    )
    base = "json_object('otel_agent.run.id', 'run_' || r, 'otel_agent.step.id', 'step_' || r || '_' || (i % 6)"
    parts = {
        "sources": f"""
            SELECT tid AS trace_id, left(md5('src' || r || '_' || i), 16) AS span_id, 'otel_agent.source' AS name,
                   'INTERNAL' AS kind, t0 + to_milliseconds(1000 + i * 300) AS start_time, 0 AS dur_us,
                   'researcher' AS service_name,
                   {base}, 'otel_agent.record.kind', 'source', 'otel_agent.source.id', 'src_' || r || '_' || i,
                     'otel_agent.source.url', 'https://example.org/' || r || '/article-' || i,
                     'otel_agent.source.title', 'Article ' || i || ' of run ' || r,
                     'otel_agent.source.provider', ['tavily', 'exa', 'jina'][i % 3 + 1],
                     'otel_agent.source.retrieved_at', strftime(t0, '%Y-%m-%dT%H:%M:%S.000+00:00')) AS attributes
            FROM g_runs, range(10) t(i)""",
        "evidence": f"""
            SELECT tid, left(md5('ev' || r || '_' || i), 16), 'otel_agent.evidence_item', 'INTERNAL',
                   t0 + to_milliseconds(5000 + i * 300), 0, 'researcher',
                   {base}, 'otel_agent.record.kind', 'evidence_item', 'otel_agent.evidence.id', 'ev_' || r || '_' || i,
                     'otel_agent.evidence.source_id', 'src_' || r || '_' || (i % 10),
                     'otel_agent.evidence.excerpt', 'Excerpt ' || i || ': ' || repeat('lorem ipsum dolor sit ', 7),
                     'otel_agent.evidence.confidence', ['high', 'medium', 'low'][i % 3 + 1],
                     'otel_agent.evidence.supports_step', 'verify')
            FROM g_runs, range(15) t(i)""",
        "claims": f"""
            SELECT tid, left(md5('cl' || r || '_' || i), 16), 'otel_agent.claim', 'INTERNAL',
                   t0 + to_milliseconds(20000 + i * 200), 0, 'researcher',
                   {base}, 'otel_agent.record.kind', 'claim', 'otel_agent.claim.id', 'claim_' || r || '_' || i,
                     'otel_agent.claim.text',
                       'Claim ' || i || ' of run ' || r || ': ' || repeat('agents do things ', 4),
                     'otel_agent.claim.confidence', ['high', 'medium', 'low'][i % 3 + 1],
                     'otel_agent.claim.artifact_version_id', 'artv_' || r || '_2')
            FROM g_runs, range(8) t(i)""",
        # 12 citations: claim i % 8; one in ten cites evidence of the previous run (cross-run lineage); the last
        # cites document 0 of the run's GenAI retrieval span (evidence of another convention).
        "citations": f"""
            SELECT tid, left(md5('cit' || r || '_' || i), 16), 'otel_agent.citation', 'INTERNAL',
                   t0 + to_milliseconds(22000 + i * 200), 0, 'researcher',
                   {base}, 'otel_agent.record.kind', 'citation', 'otel_agent.citation.id', 'cit_' || r || '_' || i,
                     'otel_agent.citation.claim_id', 'claim_' || r || '_' || (i % 8),
                     'otel_agent.citation.evidence_id',
                       CASE WHEN i = 11 THEN 'retrieval:' || tid || ':' || left(md5('ret' || r), 16) || ':0'
                            ELSE 'ev_' || CASE WHEN i = 9 AND r > 0 THEN r - 1 ELSE r END || '_' || (i % 15) END,
                     'otel_agent.citation.text', '[' || (i + 1) || ']',
                     'otel_agent.citation.status', CASE WHEN i % 7 = 6 THEN 'weak' ELSE 'valid' END)
            FROM g_runs, range(12) t(i)""",
        "conflicts": """
            SELECT tid, left(md5('cf' || r), 16), 'otel_agent.conflict', 'INTERNAL',
                   t0 + to_milliseconds(25000), 0, 'researcher',
                   json_object('otel_agent.run.id', 'run_' || r, 'otel_agent.record.kind', 'conflict',
                     'otel_agent.conflict.id', 'conflict_' || r,
                     'otel_agent.conflict.evidence_ids', ['ev_' || r || '_1', 'ev_' || r || '_2'],
                     'otel_agent.conflict.description', 'Sources disagree', 'otel_agent.conflict.severity', 'high')
            FROM g_runs WHERE r % 5 = 0""",
        "retrievals": """
            SELECT tid, left(md5('ret' || r), 16), 'retrieval web_index', 'CLIENT',
                   t0 + to_milliseconds(4000), 900000, 'researcher',
                   json_object('otel_agent.run.id', 'run_' || r, 'gen_ai.operation.name', 'retrieval',
                     'gen_ai.data_source.id', 'web_index',
                     'gen_ai.retrieval.documents', to_json([
                         {'id': 'kb_' || ((r * 3 + d) % 500), 'score': 0.9 - d / 10,
                          'content': 'Passage ' || d || ' for run ' || r, 'url': 'https://kb.example/' || d}
                         FOR d IN range(3)])::VARCHAR)
            FROM g_runs""",
        "artifacts": """
            SELECT tid, left(md5('art' || r), 16), 'otel_agent.artifact', 'INTERNAL',
                   t0 + to_milliseconds(30000), 0, 'researcher',
                   json_object('otel_agent.run.id', 'run_' || r, 'otel_agent.record.kind', 'artifact',
                     'otel_agent.artifact.id', 'art_' || r, 'otel_agent.artifact.type', 'markdown_report',
                     'otel_agent.artifact.name', 'Report ' || r)
            FROM g_runs""",
        "versions": """
            SELECT tid, left(md5('artv' || r || '_' || i), 16), 'otel_agent.artifact_version', 'INTERNAL',
                   t0 + to_milliseconds(31000 + i * 1000), 0, 'researcher',
                   json_object('otel_agent.run.id', 'run_' || r, 'otel_agent.record.kind', 'artifact_version',
                     'otel_agent.artifact.id', 'art_' || r, 'otel_agent.artifact_version.id', 'artv_' || r || '_' || i,
                     'otel_agent.artifact_version.number', i,
                     'otel_agent.artifact_version.content',
                       '# Report ' || r || chr(10) || repeat('- a claim [1]' || chr(10), 8),
                     'otel_agent.artifact_version.content_sha256', sha256('v' || r || i),
                     'otel_agent.artifact_version.evidence_ids', ['ev_' || r || '_0', 'ev_' || r || '_1'])
            FROM g_runs, range(1, 3) t(i)""",
        # 71 other spans per run: 1 flow run, 6 steps, 40 provider calls, 24 tool calls.
        "other": f"""
            SELECT tid, left(md5('o' || r || '_' || i), 16),
                   CASE WHEN i = 0 THEN 'invoke_workflow deep_research' WHEN i < 7 THEN 'step s' || i
                        WHEN i < 47 THEN 'chat gpt-4o' ELSE 'execute_tool web_search' END,
                   CASE WHEN i BETWEEN 7 AND 46 THEN 'CLIENT' ELSE 'INTERNAL' END,
                   t0 + to_milliseconds(i * 800), 400000, 'researcher',
                   CASE WHEN i < 7 THEN json_object('otel_agent.run.id', 'run_' || r, 'otel_agent.record.kind',
                                                     CASE WHEN i = 0 THEN 'flow_run' ELSE 'step' END,
                                                     'otel_agent.step.name', 's' || i)
                        WHEN i < 47 THEN {base}, 'otel_agent.record.kind', 'provider_call',
                            'gen_ai.operation.name', 'chat', 'gen_ai.provider.name', 'openai',
                            'gen_ai.request.model', 'gpt-4o', 'gen_ai.response.model', 'gpt-4o-2024-08-06',
                            'gen_ai.usage.input_tokens', 200 + (r * 7 + i * 13) % 8000,
                            'gen_ai.usage.output_tokens', 20 + (r + i) % 900, 'otel_agent.cost.usd', 0.0021,
                            'gen_ai.response.finish_reasons', ['stop'])
                        ELSE {base}, 'otel_agent.record.kind', 'tool_invocation',
                            'gen_ai.operation.name', 'execute_tool', 'gen_ai.tool.name', 'web_search',
                            'gen_ai.tool.call.id', 'call_' || r || '_' || i, 'gen_ai.tool.type', 'function',
                            'otel_agent.tool.provider', 'tavily')
                   END
            FROM g_runs, range({OTHER_PER_RUN}) t(i)""",
    }
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE g_ops AS SELECT o, {T0} + to_milliseconds(o * 850) AS t0, "
        f"md5('op' || o) AS tid, o % 20 AS kind FROM range({operations}) t(o)"
    )
    # kind (o % 20): 0-7 verified, 8-9 orphaned, 10-12 waiting, 13-14 working/stuck, 15-17 failed, 18-19 retried
    plan = """
        SELECT o, t0, tid, kind, x.* FROM g_ops, LATERAL (
            SELECT * FROM (VALUES
                (0, 'delegated', 'a', 0, 'researcher'), (1, 'accepted', 'a', 3, 'fact_checker'),
                (2, 'progress', 'a', 60, 'fact_checker'), (3, 'completed', 'a', 300, 'fact_checker'),
                (4, 'outcome_verified', 'a', 320, 'verifier'), (5, 'waiting', 'a', 90, 'fact_checker'),
                (6, 'outcome_failed', 'a', 330, 'verifier'), (7, 'delegated', 'b', 200, 'researcher'),
                (8, 'accepted', 'b', 204, 'fact_checker'), (9, 'progress', 'b', 260, 'fact_checker'),
                (10, 'completed', 'b', 500, 'fact_checker'), (11, 'outcome_verified', 'b', 520, 'verifier')
            ) v(step, transition, attempt, offset_s, service)
            WHERE CASE WHEN kind < 8 THEN step <= 4
                       WHEN kind < 10 THEN step = 0
                       WHEN kind < 13 THEN step IN (0, 1, 5)
                       WHEN kind < 15 THEN step IN (0, 1, 2)
                       WHEN kind < 18 THEN step IN (0, 1, 3, 6)
                       ELSE step IN (0, 7, 8, 9, 10, 11) END
        ) x"""
    parts["receipts"] = f"""
        SELECT tid, left(md5('rt' || o || '_' || step), 16), 'otel_agent.receipt.' || transition,
               CASE WHEN transition = 'delegated' THEN 'PRODUCER' ELSE 'INTERNAL' END,
               t0 + to_seconds(offset_s), 0, service,
               json_object('otel_agent.record.kind', 'receipt_transition',
                 'otel_agent.receipt.operation_id', 'op_' || o,
                 'otel_agent.receipt.handoff_id', 'hof_' || o || '_' || attempt,
                 'otel_agent.receipt.transition', transition,
                 'otel_agent.receipt.expected_artifact', 'fact_check_report',
                 'otel_agent.receipt.waiting_for', CASE WHEN transition = 'waiting' THEN 'approval:source' END,
                 'otel_agent.receipt.reason', CASE WHEN transition = 'outcome_failed' THEN 'artifact_missing' END)
        FROM ({plan})"""
    union = " UNION ALL ".join(
        f"SELECT * FROM ({sql}) AS p(trace_id, span_id, name, kind, start_time, dur_us, service_name, attributes)"
        for sql in parts.values()
    )
    # Rows in arrival order: a live receiver stores spans roughly by end time.
    con.execute(f"INSERT INTO spans BY NAME SELECT {COMMON} FROM ({union}) ORDER BY end_time, span_id")
    # the typed columns the receiver's fold fills (run_id, record_kind, record_id, record_ref), by the same rule
    # in SQL (tests/derived_evidence/test_promoted_columns.py checks the two agree)
    con.execute(backfill_sql())
    # and the lookup tables the receiver writes with each batch
    fill_lookup_tables(con)
    con.execute("CHECKPOINT")


def timed(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> tuple[float, float]:
    """(wall ms, CPU ms of this process: DuckDB's threads included) to run ``sql`` and fetch all of it.

    A statement with parameters (the point lookups) runs through ``execute``, as the query API runs statements;
    the others are fetched as Arrow through ``con.sql``, which plans a statement twice (to build the relation,
    then to run it): negligible next to a 100 k-row result, but planning is most of a point lookup's cost."""
    cpu, wall = time.process_time(), time.perf_counter()
    if params is not None:
        con.execute(sql, params).fetchall()
    else:
        con.sql(sql).to_arrow_table()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def report(label: str, samples: list[tuple[float, float]], target_ms: float | None = None) -> None:
    walls = sorted(w for w, _ in samples)
    cpus = sorted(c for _, c in samples)
    med = statistics.median(walls)
    p95 = walls[max(0, round(0.95 * len(walls)) - 1)]
    verdict = ""
    if target_ms is not None:
        verdict = f"  target < {target_ms:g} ms: {'met' if med < target_ms else 'NOT met'}"
    print(
        f"  {label:<56} wall median {med:7.1f} ms  p95 {p95:7.1f} ms  min {walls[0]:7.1f} ms"
        f" | CPU median {statistics.median(cpus):7.1f} ms  (n={len(samples)}){verdict}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spans", type=int, default=1_000_000, help="approximate store size in spans")
    ap.add_argument("--operations", type=int, default=100_000, help="handoff operations")
    ap.add_argument("--db", default=None, help="store file (default: a temporary file)")
    ap.add_argument("--keep", action="store_true", help="keep the store file")
    ap.add_argument("--repeat", type=int, default=15, help="timed repetitions per query")
    args = ap.parse_args()

    receipt_spans = int(args.operations * TRANSITIONS_PER_OP)
    runs = max(1, int((args.spans - receipt_spans) / (RECORDS_PER_RUN + OTHER_PER_RUN)))
    tmp = None
    if args.db is None:
        tmp = tempfile.mkdtemp(prefix="otel-agent-bench-")
        args.db = os.path.join(tmp, "evidence.duckdb")
    path = Path(args.db)
    if path.exists():
        path.unlink()
    print(f"building {args.db}: {runs} research runs + {args.operations} handoff operations …")
    started = time.perf_counter()
    con = open_store(path)
    generate(con, runs, args.operations)
    counts = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE name LIKE 'otel_agent.receipt.%'), "
        "count(*) FILTER (WHERE name IN ('otel_agent.source', 'otel_agent.evidence_item', 'otel_agent.claim', "
        "'otel_agent.citation', 'otel_agent.conflict', 'otel_agent.artifact', 'otel_agent.artifact_version')) "
        "FROM spans"
    ).fetchall()[0]
    con.close()
    size_mb = path.stat().st_size / 1e6
    print(
        f"  {counts[0]:,} spans ({counts[1]:,} receipt transitions, {counts[2]:,} evidence/artifact records), "
        f"{size_mb:,.0f} MB, built in {time.perf_counter() - started:.1f} s"
    )

    con = duckdb.connect(str(path), read_only=True)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    load = os.getloadavg()[0]
    print(
        f"timings (read-only connection, DuckDB {duckdb.__version__}, {threads} threads, warm cache, "
        f"load average {load:.2f} on {os.cpu_count()} CPUs):"
    )
    claims = [f"claim_{(i * 7919) % runs}_{i % 8}" for i in range(args.repeat + 2)]
    fast_sql = "SELECT * FROM claim_lineage_of(?)"
    paths = con.execute(fast_sql, [claims[0]]).fetchall()
    assert paths, "the lineage of a generated claim is empty"
    timed(con, fast_sql, [claims[1]])
    report(
        f"lineage of one claim: claim_lineage_of ({len(paths)} paths)",
        [timed(con, fast_sql, [c]) for c in claims[2:]],
        20,
    )
    view_sql = "SELECT * FROM claim_lineage WHERE claim_id = ?"
    report("lineage of one claim: claim_lineage view + WHERE", [timed(con, view_sql, [c]) for c in claims[2:5]])

    as_of = "TIMESTAMP '2026-03-02 00:00:00'"
    state_sql = f"SELECT * FROM receipt_state_at({as_of})"
    n_ops = con.execute(f"SELECT count(*) FROM ({state_sql})").fetchall()[0][0]
    by_state = con.execute(f"SELECT state, count(*) FROM ({state_sql}) GROUP BY ALL ORDER BY 2 DESC").fetchall()
    timed(con, state_sql)
    report(
        f"receipt_state_at over {n_ops:,} operations (all rows → Arrow)",
        [timed(con, state_sql) for _ in range(max(5, args.repeat // 2))],
        500,
    )
    print("    states: " + ", ".join(f"{s} {n:,}" for s, n in by_state))
    report("receipt_state (view, as of now)", [timed(con, "SELECT * FROM receipt_state") for _ in range(3)])
    one_op = f"SELECT * FROM receipt_state_at({as_of}) WHERE operation_id = 'op_4242'"
    report("receipt_state_at, one operation", [timed(con, one_op) for _ in range(3)])
    for label, sql in [
        ("claim_support, every claim", "SELECT * FROM claim_support"),
        ("artifact_versions, every version", "SELECT * FROM artifact_versions"),
        ("sources, every source", "SELECT * FROM sources"),
    ]:
        timed(con, sql)
        report(label, [timed(con, sql) for _ in range(3)])
    con.close()
    if tmp and not args.keep:
        path.unlink()
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
