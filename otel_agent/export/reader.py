"""Reading rows of the derived views as plain JSON values, the same from a file and from a live receiver.

Each query is wrapped as ``SELECT to_json(q)::VARCHAR FROM (...) q``: DuckDB renders every row itself, so
timestamps, lists and JSON columns come out identically whichever path the query took. Long results are
read in pages (the receiver caps the rows of one answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from otel_agent.errors import OtelAgentError
from otel_agent.query.client import run_sql

PAGE_ROWS = 5_000


@dataclass
class Reader:
    dbs: list[str]
    receiver: str | None = None
    token: str | None = None
    page_rows: int = PAGE_ROWS
    queries: list[str] = field(default_factory=list)

    def rows(
        self, sql: str, params: list[Any] | None = None, *, order_by: str, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Rows of ``sql`` (ordered by ``order_by``, which must make the order total) as dicts; all of them, or
        the first ``limit``."""
        out: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = self.page_rows if limit is None else min(self.page_rows, limit - len(out))
            paged = f"SELECT to_json(q)::VARCHAR AS row FROM ({sql}) q ORDER BY {order_by} LIMIT {page} OFFSET {offset}"
            self.queries.append(paged)
            result = run_sql(paged, self.dbs, receiver=self.receiver, token=self.token, params=params, max_rows=page)
            out.extend(json.loads(r[0]) for r in result.rows)
            if result.truncated_by == "bytes" and not result.rows:
                raise OtelAgentError(f"one row is larger than the receiver's byte cap: {result.truncated_reason}")
            # A page cut at the receiver's byte cap is not the end: the next page starts after its last row.
            if (len(result.rows) < page and result.truncated_by != "bytes") or (
                limit is not None and len(out) >= limit
            ):
                return out
            offset += len(result.rows)

    def one(self, sql: str, params: list[Any] | None = None, *, order_by: str) -> dict[str, Any] | None:
        found = self.rows(sql, params, order_by=order_by, limit=1)
        return found[0] if found else None
