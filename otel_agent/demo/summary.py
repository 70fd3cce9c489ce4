"""What ``otel-agent demo`` prints: a short summary read back from the DuckDB file, and the commands to explore it.

The counts and highlights are the demo's own questions over the raw tables (``spans``, ``span_events``,
``span_links``: the story it tells is its own), asked through the read layer's source (``read.stores``), the same
path every reading command takes, so what is printed is what was committed. The receipts are ``otel-agent
receipts``' own read (``read.receipts``), so the demo says the same state names by the same rules.
"""

from __future__ import annotations

from typing import Any

from otel_agent.demo import content as C
from otel_agent.read.receipts import receipts_table as read_receipts
from otel_agent.read.source import Table
from otel_agent.read.stores import Where, open_source
from otel_agent.read.text_table import table

KIND = "attributes->>'otel_agent.record.kind'"

SPANS_BY_KIND = f"""
SELECT {KIND} AS record_kind,
       count(*) FILTER (WHERE service_name = '{C.AGENT_SERVICE}') AS agent,
       count(*) FILTER (WHERE service_name = '{C.WORKER_SERVICE}') AS worker,
       count(*) AS total
FROM spans WHERE {KIND} IS NOT NULL AND NOT oa_is_pending(attributes) GROUP BY ALL ORDER BY record_kind
"""
# (not the announcements of runs and steps that started: pending spans, docs/views-runs.md "Runs in progress")

PROCESSES = """
SELECT service_name, any_value(resource_attributes->>'process.pid') AS pid, count(*) AS spans,
       count(DISTINCT trace_id) AS traces
FROM spans GROUP BY service_name ORDER BY min(start_time)
"""

# The receipts command's columns that fit the summary; same query, same windows, evaluated now.
RECEIPT_COLUMNS = ("operation_id", "state", "why", "handoff_id", "expected_artifact")

ARTIFACT_VERSIONS = f"""
SELECT a.attributes->>'otel_agent.artifact.name' AS artifact, a.attributes->>'otel_agent.artifact.type' AS type,
       v.attributes->>'otel_agent.artifact_version.id' AS version,
       (v.attributes->>'otel_agent.artifact_version.number')::INT AS n,
       left(v.attributes->>'otel_agent.artifact_version.content_sha256', 12) AS sha256,
       v.service_name AS written_by
FROM spans v JOIN spans a
  ON a.attributes->>'otel_agent.artifact.id' = v.attributes->>'otel_agent.artifact.id' AND a.{KIND} = 'artifact'
WHERE v.{KIND} = 'artifact_version' ORDER BY v.start_time, n
"""

FALLBACKS = """
SELECT e.attributes->>'otel_agent.fallback.from_provider' || '/' || (e.attributes->>'otel_agent.fallback.from_model'),
       e.attributes->>'otel_agent.fallback.to_provider' || '/' || (e.attributes->>'otel_agent.fallback.to_model'),
       e.attributes->>'otel_agent.fallback.reason',
       s.attributes->>'otel_agent.retry.count'
FROM span_events e JOIN spans s USING (trace_id, span_id)
WHERE e.name = 'otel_agent.fallback' AND s.attributes->>'otel_agent.record.kind' <> 'proxy_request'
"""

# The proxy's fallbacks, from the views (docs/views-runs.md, "Proxy requests").
PROXY_FALLBACKS = """
SELECT f.client, f.from_provider || '/' || f.from_model, f.to_provider || '/' || f.to_model, f.reason, f.status,
       r.stream_chunks
FROM proxy_fallbacks f JOIN proxy_requests r USING (trace_id, span_id) ORDER BY f.time
"""

BLOCKED_GUARDS = f"""
SELECT attributes->>'otel_agent.guard.name', attributes->>'otel_agent.guard.target_id',
       attributes->>'otel_agent.guard.reason'
FROM spans WHERE {KIND} = 'guard_result' AND attributes->>'otel_agent.guard.outcome' = 'blocked'
"""

CONFLICTS = f"""
SELECT attributes->>'otel_agent.conflict.description', attributes->>'otel_agent.conflict.severity'
FROM spans WHERE {KIND} = 'conflict'
"""

DECISIONS = """
SELECT name, model_decision, effective_decision, review_required, human_verdict, human_reviewer
FROM decisions ORDER BY decided_at, decision_id
"""

BADCASES = f"""
SELECT attributes->>'otel_agent.badcase.stage', attributes->>'otel_agent.badcase.error_type',
       attributes->>'otel_agent.badcase.provider' || '/' || (attributes->>'otel_agent.badcase.model')
FROM spans WHERE {KIND} = 'badcase'
"""

MEMORY = f"""
SELECT attributes->>'otel_agent.memory_proposal.memory_type', attributes->>'otel_agent.memory_proposal.summary'
FROM spans WHERE {KIND} = 'memory_proposal'
"""

COMPRESSIONS = """
SELECT s.attributes->>'otel_agent.context.snapshot_id', s.attributes->>'otel_agent.context.used_tokens',
       s.attributes->>'otel_agent.context.available_tokens', e.attributes->>'otel_agent.context.block.type',
       e.attributes->>'otel_agent.context.compression.original_tokens',
       e.attributes->>'otel_agent.context.compression.compressed_tokens'
FROM span_events e JOIN spans s USING (trace_id, span_id) WHERE e.name = 'otel_agent.context.compression'
"""

HANDOFF_LINKS = f"""
SELECT w.name, w.service_name, d.name, d.service_name
FROM span_links l JOIN spans w USING (trace_id, span_id)
JOIN spans d ON d.trace_id = l.linked_trace_id AND d.span_id = l.linked_span_id
WHERE l.attributes->>'otel_agent.link.type' = 'handoff' AND w.{KIND} = 'receipt_transition'
"""


def _read(db: str, sql: str) -> Table:
    with open_source(Where((db,))) as src:
        return src.table(sql)


def _rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    return _read(db, sql).rows


def _table(db: str, sql: str) -> str:
    result = _read(db, sql)
    return table(result.columns, result.rows)


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def highlights(db: str) -> list[str]:
    lines: list[str] = []
    for frm, to, reason, retries in _rows(db, FALLBACKS):
        lines.append(f"fallback  {frm} -> {to} ({reason}) after {retries or 0} retry")
    for client, frm, to, reason, status, chunks in _rows(db, PROXY_FALLBACKS):
        lines.append(f"proxy     {client}'s request: {frm} -> {to} ({reason}, {status}), {chunks} stream chunks")
    for name, target, reason in _rows(db, BLOCKED_GUARDS):
        lines.append(f"guard     {name} blocked {target} ({reason})")
    for description, severity in _rows(db, CONFLICTS):
        lines.append(f"conflict  {description} (severity {severity})")
    for name, model, effective, review, verdict, reviewer in _rows(db, DECISIONS):
        flag = "human review required" if review else "no review"
        if verdict:
            flag = f"{reviewer} answered {verdict!r}"
        lines.append(f"decision  {name}: model said {model!r}, policy gate made it {effective!r} -> {flag}")
    for stage, error_type, where in _rows(db, BADCASES):
        lines.append(f"badcase   {stage}: {error_type} from {where}")
    for snapshot, used, available, block_type, original, compressed in _rows(db, COMPRESSIONS):
        lines.append(
            f"context   {snapshot}: {used}/{available} tokens; {block_type} truncated {original} -> {compressed}"
        )
    for memory_type, summary in _rows(db, MEMORY):
        lines.append(f"memory    {memory_type} proposal, pending review: {summary}")
    for span, worker, linked, delegator in _rows(db, HANDOFF_LINKS):
        lines.append(f"link      {span} ({worker}) -> {linked} ({delegator})")
    return lines


def summarize(db: str, run_id: str) -> str:
    """The printed summary of the demo store at ``db`` (a closed file, or one a live receiver holds)."""
    processes = _rows(db, PROCESSES)
    total = sum(int(r[2]) for r in processes)
    who = ", ".join(f"{service} (pid {pid}): {n} spans" for service, pid, n, _ in processes)
    parts = [
        f"Run {run_id}: {total} spans committed to {db}",
        f"  {who}",
        "",
        "Spans by otel_agent.record.kind",
        _indent(_table(db, SPANS_BY_KIND)),
        "",
        "Handoff receipts (otel-agent receipts)",
        _indent(receipts_table(db)),
        "",
        "Artifact versions (regenerating adds a version)",
        _indent(_table(db, ARTIFACT_VERSIONS)),
        "",
        "Highlights",
        _indent("\n".join(highlights(db))),
    ]
    return "\n".join(parts)


def receipts_table(db: str) -> str:
    """The demo's operations as ``otel-agent receipts`` states them (same query, same default windows)."""
    with open_source(Where((db,))) as src:
        result = read_receipts(src)
    keep = [result.columns.index(c) for c in RECEIPT_COLUMNS]
    return table(list(RECEIPT_COLUMNS), [tuple(row[i] for i in keep) for row in result.rows])


def _quote(db: str) -> str:
    return db if all(c.isalnum() or c in "./_-" for c in db) else "'" + db.replace("'", "'\\''") + "'"


def explore_commands(db: str, run_id: str) -> list[tuple[str, str]]:
    """(what it shows, the command) — tests run every one of them."""
    q = _quote(db)
    return [
        ("recent runs: status, calls, tokens, cost", f"otel-agent runs --db {q}"),
        ("this run as a tree: steps, calls, tools, guards, handoffs", f"otel-agent run {run_id} --db {q}"),
        ("the claims and whether evidence supports them", f"otel-agent claims --db {q}"),
        ("one claim back to its sources", f"otel-agent lineage {C.version_claim_id(2, C.CLAIMS_V2[1])} --db {q}"),
        ("the handoffs: who accepted, what was verified", f"otel-agent receipts --db {q}"),
        ("this run's metrics, the LLM proxy's per client / provider / model", f"otel-agent metrics {run_id} --db {q}"),
        ("the report with its citations", f"otel-agent export report {C.REPORT_ID} --db {q}"),
        ("the workflow manifest and its business timeline", f"otel-agent manifest {run_id} --db {q}"),
        ("recoveries: authority, limits, whether one was exceeded", f"otel-agent receipts --recoveries --db {q}"),
        ("all of it in the browser console", f"otel-agent ui --db {q}"),
    ]


def explore(db: str, run_id: str) -> str:
    """The commands to explore the store, one per line, each under a comment."""
    lines = ["Explore it (otel-agent COMMAND --help; the views: docs/views-runs.md, docs/views-evidence.md):"]
    for title, command in explore_commands(db, run_id):
        lines.append(f"  # {title}")
        lines.append(f"  {command}")
    return "\n".join(lines)
