"""``/sql``: the read-only query API in a text box, results as a table, CSV and JSON downloads. It runs through
``read.query.sandboxed`` (``query.readonly.run_query``) on the console's connection: the same statement check,
row cap, time limit and locked-down connection as ``POST /v1/query``. The page shows at most ``PAGE_ROWS`` rows;
downloads carry up to the row cap.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.as_json import wants_json
from otel_agent.console.security import Viewer
from otel_agent.errors import OtelAgentError
from otel_agent.read.query import sandboxed
from otel_agent.read.schema import columns
from otel_agent.server.query_service import to_value

PAGE_ROWS = 500
MAX_SQL = 20_000
EXAMPLE = "SELECT run_id, workflow_name, status, duration_ms, cost_usd FROM runs ORDER BY start_time DESC LIMIT 20"


def _plain(v: Any) -> Any:
    from google.protobuf import json_format

    return json_format.MessageToDict(to_value(v))


async def sql_page(request: Request, console: Any, viewer: Viewer) -> Response:
    sql = (request.query_params.get("q") or "")[:MAX_SQL]
    fmt = request.query_params.get("format")
    result = None
    error = None
    if sql.strip():
        try:
            result = await console.store.load(
                lambda q: sandboxed(
                    q, sql, max_rows=console.query_max_rows, max_bytes=None, timeout_s=console.query_timeout_s
                )
            )
        except OtelAgentError as exc:  # refused, failed or too slow: said beside the editor, which keeps the text
            if fmt in ("csv", "json") or wants_json(request):  # data asked for: the error as data
                raise
            error = str(exc)
    if result is not None and fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(result.columns)
        for row in result.rows:
            writer.writerow(["" if v is None else _plain(v) if isinstance(v, (list, dict)) else v for v in row])
        return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="query.csv"'})  # fmt: skip
    if result is not None and fmt == "json":
        body = {
            "columns": [{"name": n, "type": t} for n, t in zip(result.columns, result.types, strict=True)],
            "rows": [[_plain(v) for v in row] for row in result.rows],
            "truncated": result.truncated,
        }
        return Response(json.dumps(body, ensure_ascii=False), media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="query.json"'})  # fmt: skip
    rows = result.rows[:PAGE_ROWS] if result else []
    schema = await console.store.load(_schema, key=("sql_schema",))
    return console.html(
        request, viewer, "sql.html", 400 if error else 200, active="sql", sql=sql, example=EXAMPLE, result=result,
        rows=rows, page_rows=PAGE_ROWS, error=error, schema=schema,
    )  # fmt: skip


def _schema(src: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """The public views and raw tables with their columns, for the schema browser beside the editor."""
    by_view: dict[str, list[tuple[str, str]]] = {}
    for view, column, kind in columns(src).rows:
        by_view.setdefault(view, []).append((column, kind))
    return list(by_view.items())


ROUTES = [("/sql", sql_page, ["GET"], "query")]
