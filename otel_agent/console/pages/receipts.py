"""``/receipts`` Handoffs: operations grouped by operator state with the reason, age, target, expected artifact and
links to both traces; as-of time and windows adjustable; the page refreshes itself while open (unless pinned to
an as-of time).

Queries: store/console/receipts_state.sql, receipts_traces.sql. Template: templates/receipts.html.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.cli.receipts import ACK_WINDOW_S, PROGRESS_WINDOW_S, VERIFICATION_WINDOW_S
from otel_agent.console.pages import int_arg, time_arg
from otel_agent.console.security import Viewer

STATES = ("stuck", "uncertain", "outcome_failed", "orphaned", "waiting", "working", "verified")
PER_STATE = 100


async def receipts_page(request: Request, console: Any, viewer: Viewer) -> Response:
    pinned = time_arg(request, "at")
    as_of = pinned or _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    windows = {
        # The same defaults as `otel-agent receipts` (one place: cli/receipts.py).
        "ack_s": int_arg(request, "ack", int(ACK_WINDOW_S), 1, 30 * 86400),
        "progress_s": int_arg(request, "progress", int(PROGRESS_WINDOW_S), 1, 30 * 86400),
        "verification_s": int_arg(request, "verification", int(VERIFICATION_WINDOW_S), 1, 30 * 86400),
    }

    def load(q: Any) -> dict[str, Any]:
        rows = q.rows("receipts_state", as_of=as_of, limit=PER_STATE, **windows)
        traces = q.rows("receipts_traces", operation_ids=[r["operation_id"] for r in rows]) if rows else []
        return {"rows": rows, "traces": {t["operation_id"]: t for t in traces}}

    data = await console.store.load(load)
    groups: dict[str, list[dict[str, Any]]] = {}
    totals: dict[str, int] = {}
    for r in data["rows"]:
        last = r.get("last_transition_at")
        r["age_s"] = (as_of - last).total_seconds() if isinstance(last, _dt.datetime) else None
        r["traces"] = data["traces"].get(r["operation_id"], {})
        groups.setdefault(r["state"], []).append(r)
        totals[r["state"]] = int(r["in_state"])
    order = [s for s in STATES if s in groups] + sorted(s for s in groups if s not in STATES)
    return console.html(
        request, viewer, "receipts.html", active="receipts", groups=groups, order=order, totals=totals,
        as_of=as_of, pinned=pinned is not None, windows=windows, per_state=PER_STATE,
    )  # fmt: skip


ROUTES = [("/receipts", receipts_page, ["GET"], "query")]
