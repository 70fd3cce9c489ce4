"""``/receipts`` Handoffs: operations grouped by operator state with the reason, age, target, expected artifact and
links to both traces; as-of time and windows adjustable; the page refreshes itself while open (unless pinned to
an as-of time).

Read: ``read.receipts.receipts_by_state`` (the states, their order and the windows of ``otel-agent receipts``)
and ``read.alerts.firing_by_key`` (an operation that is the key of a firing alert is marked).
Template: templates/receipts.html.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.console.pages import int_arg, time_arg
from otel_agent.console.security import Viewer
from otel_agent.read.alerts import RECEIPT_KINDS, firing_by_key
from otel_agent.read.receipts import (
    ACK_WINDOW_S,
    MAX_WINDOW_S,
    PROGRESS_WINDOW_S,
    VERIFICATION_WINDOW_S,
    Windows,
    receipts_by_state,
)

PER_STATE = 100


async def receipts_page(request: Request, console: Any, viewer: Viewer) -> Response:
    pinned = time_arg(request, "at")
    as_of = pinned or _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
    windows = Windows(
        ack_s=int_arg(request, "ack", int(ACK_WINDOW_S), 1, MAX_WINDOW_S),
        progress_s=int_arg(request, "progress", int(PROGRESS_WINDOW_S), 1, MAX_WINDOW_S),
        verification_s=int_arg(request, "verification", int(VERIFICATION_WINDOW_S), 1, MAX_WINDOW_S),
    )
    data, marks = await asyncio.gather(
        console.store.load(lambda q: receipts_by_state(q, as_of, windows, PER_STATE)),
        console.store.load(lambda q: firing_by_key(q, RECEIPT_KINDS)),
    )
    return console.html(
        request, viewer, "receipts.html", active="receipts", groups=data.groups, order=data.order,
        totals=data.totals, as_of=as_of, pinned=pinned is not None, windows=windows, per_state=PER_STATE,
        marks=marks, data=data,
    )  # fmt: skip


ROUTES = [("/receipts", receipts_page, ["GET"], "query")]
