"""``/search`` Search: spans across runs, or runs, by any attribute (``key = value``, ``key != value``, ``key ~
text``, ``key``: present; ``name``, ``service``, ``status``… name columns; ``resource.KEY`` a resource
attribute), over a time range (presets 15 m, 1 h, 24 h, 7 d, all time, or a custom from / to), a page at a time;
every search a bookmarkable URL.

Read: ``read.search.search_spans`` / ``search_runs`` (the raw ``spans`` table in the window: row groups outside
it are skipped by their ``start_time`` bounds; LIMIT stops the page). Template: templates/search.html.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import choice_arg, page_args, paged, time_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import InvalidPayloadError
from otel_agent.read.search import parse, search_runs, search_spans

PRESETS = {"15m": 15 * 60, "1h": 3600, "24h": 86400, "7d": 7 * 86400}
"""Time range presets (seconds back from now); ``all``: no bound; ``custom``: ``from`` / ``to``."""
RANGES = (*PRESETS, "all", "custom")
EXAMPLES = ("gen_ai.request.model ~ gpt", "error.type", "gen_ai.tool.name = web_fetch and status = ERROR",
            "service = deep-research-agent and name ~ chat", "resource.service.version ~ 0.")  # fmt: skip


async def search_page(request: Request, console: Any, viewer: Viewer) -> Response:
    limit, offset = page_args(request)
    q = (request.query_params.get("q") or "").strip()[:2000]
    scope = choice_arg(request, "scope", ("spans", "runs"), "spans") or "spans"
    rng = choice_arg(request, "range", RANGES, None)
    if rng is None:
        rng = "custom" if request.query_params.get("from") or request.query_params.get("to") else "24h"
    now = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    t0: _dt.datetime | None
    t1: _dt.datetime | None
    if rng in PRESETS:
        t0, t1 = now - _dt.timedelta(seconds=PRESETS[rng]), None
    elif rng == "custom":
        t0, t1 = time_arg(request, "from"), time_arg(request, "to")
    else:
        t0 = t1 = None
    error = None
    try:
        terms = parse(q)
    except InvalidPayloadError as exc:
        terms, error = [], str(exc)
    rows: list[dict[str, Any]] = []
    if terms:
        read = search_runs if scope == "runs" else search_spans
        rows = await console.store.load(lambda src: read(src, terms, t0, t1, limit, offset))
    rows, page = paged(rows, offset, limit)
    return console.html(
        request, viewer, "search.html", active="search", q=q, scope=scope, range=rng, presets=RANGES, t0=t0, t1=t1,
        rows=rows, page=page, terms=[str(t) for t in terms], error=error, examples=EXAMPLES,
        data={"query": q, "terms": [str(t) for t in terms], "scope": scope, "from": t0, "to": t1, "rows": rows,
              "page": page},
    )  # fmt: skip


ROUTES = [("/search", search_page, ["GET"], "query")]
