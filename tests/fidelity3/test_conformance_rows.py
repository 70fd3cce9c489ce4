"""Every value the classification SQL recognises under the issue 32 rules (the Vercel AI SDK's ai.operationId, MCP's
mcp.method.name) has a row in docs/semconv.md's conformance table, which tests/derived_runs/test_conformance.py
checks row by row (one span per row gets the row's category)."""

from __future__ import annotations

import re

from otel_agent.store.statements import statement
from tests.derived_runs.test_conformance import rows


def test_vercel_and_mcp_values_have_rows() -> None:
    sql = statement("views/runs/classified")
    vercel = sql[sql.index("WHEN ai_operation_id IS NOT NULL THEN\n") :]
    vercel = vercel[: vercel.index("END", vercel.index("CASE"))]
    documented = {(a, v) for a, v, _ in rows()}
    recognised = {("ai.operationId", v) for v in re.findall(r"'(ai\.[A-Za-z.]+)'", vercel)}
    recognised |= {
        ("ai.operationId", f"ai.{verb}.do{suffix}")
        for verb, suffix in (("generateText", "Generate"), ("streamText", "Stream"), ("embed", "Embed"))
    }
    recognised.add(("mcp.method.name", "tools/call"))
    assert len(recognised) >= 8
    assert sorted(recognised - documented) == []
