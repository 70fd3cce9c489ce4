"""Every console page also answers JSON, as datasette does: ``<path>.json`` (``/`` is ``/index.json``) or an
``Accept: application/json`` header gives the data the page shows — the same read call's result (the page's
``data``: the read layer's typed result, or the rows it rendered) — instead of its HTML. Errors are JSON too
(``{"error": …, "status": …}``, same status code). Values are plain JSON: dataclasses as objects, times as ISO
8601, decimals as numbers, NaN as null; strings as stored (JSON is data: a browser never renders it as HTML, and
every response carries ``nosniff``)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

SUFFIX = ".json"


def json_path(path: str) -> str:
    """The JSON twin of a page's path."""
    return "/index.json" if path == "/" else path + SUFFIX


def wants_json(request: Request) -> bool:
    if getattr(request.state, "json", False):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return value.hex()
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


# What a page passes its template for drawing only (SVG geometry, charts, rendered HTML): never data.
PRESENTATION = frozenset(
    {"request", "viewer", "console", "nav", "args", "charts", "cost_charts", "axis", "nodes", "report_html", "diff",
     "csrf", "base", "active", "statuses", "example", "page_rows", "graph", "view"}
)  # fmt: skip


def json_response(template: str, code: int, ctx: dict[str, Any]) -> Response:
    """A page's JSON: its ``data`` when it names it, else what it gave its template but presentation."""
    if "data" in ctx:
        body: Any = ctx["data"]
    else:
        body = {k: v for k, v in ctx.items() if k not in PRESENTATION}
    text = json.dumps({"page": template.removesuffix(".html"), "data": plain(body)}, ensure_ascii=False)
    return Response(text, status_code=code, media_type="application/json")


def json_error(status: int, title: str, message: str) -> Response:
    text = json.dumps({"error": message, "title": title, "status": status}, ensure_ascii=False)
    return Response(text, status_code=status, media_type="application/json")
