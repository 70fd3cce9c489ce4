"""Provider, proxy, skill and tool health over a time range (``provider_health_between``,
``proxy_health_between``, ``skill_health_between``, ``tool_usage_between``: docs/views-runs.md). Either bound may
be None (open). With the maintained state current the macros read the window's maintained facts; without it, on
a source that can be scoped, the spans are parsed once for the three span-based tables
(``read/sql/health_scope.sql``); over a receiver's query API each table reads its macro unscoped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from otel_agent.read.runs import reads_maintained
from otel_agent.read.source import CursorSource, Source, Table


@dataclass
class Health:
    """Health over [t0, t1): ``providers`` (by provider/model), ``proxy`` (by client/provider/model),
    ``skills``, ``tools``; at most 200 rows each, busiest first."""

    t0: Any
    t1: Any
    providers: list[dict[str, Any]]
    proxy: list[dict[str, Any]]
    skills: list[dict[str, Any]]
    tools: list[dict[str, Any]]


def health(src: Source, t0: Any = None, t1: Any = None, *, proxy: bool = True) -> Health:
    window = {"t0": t0, "t1": t1}
    # The proxy table reads the priced run views (columns the health scope does not keep): before the scope.
    proxied = src.rows("proxy_health", window) if proxy else []
    if not (isinstance(src, CursorSource) and reads_maintained(src)):  # else: the window's maintained facts
        src.scope("health_scope", console_t0=t0, console_t1=t1)  # all time too: one parse
    return Health(
        t0, t1, src.rows("providers_health", window), proxied, src.rows("skills_health", window),
        src.rows("tools_usage", window),
    )  # fmt: skip


TABLES = {
    "providers": """
SELECT provider, model, calls, errors, error_rate, retries, fallbacks_out, fallbacks_in, p50_latency_ms,
       p95_latency_ms, input_tokens, output_tokens, last_call_at
FROM provider_health_between(CAST($t0 AS TIMESTAMP), CAST($t1 AS TIMESTAMP))
ORDER BY error_rate DESC, calls DESC, provider, model
""",
    "skills": """
SELECT skill_ref, invocations, errors, error_rate, p50_duration_ms, p95_duration_ms, last_invocation_at
FROM skill_health_between(CAST($t0 AS TIMESTAMP), CAST($t1 AS TIMESTAMP))
ORDER BY error_rate DESC, invocations DESC, skill_ref
""",
    "tools": """
SELECT tool_name, tool_provider, calls, errors, error_rate, retries, p50_latency_ms, p95_latency_ms, cost_usd,
       last_call_at
FROM tool_usage_between(CAST($t0 AS TIMESTAMP), CAST($t1 AS TIMESTAMP))
ORDER BY error_rate DESC, calls DESC, tool_name, tool_provider
""",
}


def health_table(src: Source, what: str, t0: Any, t1: Any, max_rows: int) -> Table:
    """One health table (``TABLES``: providers, skills, tools), worst first."""
    return src.table(TABLES[what], {"t0": t0, "t1": t1}, max_rows=max_rows)
