"""``/alerts``: the alerts of the receiver's rules — firing (with acknowledge), recently resolved, and the latest
events — refreshing itself while open; ``?key=`` / ``?rule=``: only those of one key (a run id, a handoff
operation: the marks of the runs and receipts pages link here) or one rule. ``POST /alerts/ack`` acknowledges
one as the signed-in principal (the ``review`` role, the CSRF token; the INSERT on the writer thread, as reviews
are written).

Read: ``read.alerts.alerts_page``. Template: templates/alerts.html. Rules and the lifecycle: docs/alerts.md.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from otel_agent.console.pages import text_arg
from otel_agent.console.security import Viewer
from otel_agent.errors import PermissionDeniedError
from otel_agent.read.alerts import alerts_page


async def alerts_list(request: Request, console: Any, viewer: Viewer) -> Response:
    rule, key = text_arg(request, "rule"), text_arg(request, "key")  # ?key=: a run's or receipt's mark links here
    data = await console.store.load(lambda q: alerts_page(q, rule=rule, key=key))
    return console.html(
        request, viewer, "alerts.html", active="alerts", firing=data.firing, resolved=data.resolved,
        history=data.history, can_ack=getattr(console, "decide_alert", None) is not None,
        acked=request.query_params.get("acked"), rule=rule, key=key, data=data,
    )  # fmt: skip


async def alert_ack(request: Request, console: Any, viewer: Viewer) -> Response:
    decide = getattr(console, "decide_alert", None)
    if decide is None:
        raise PermissionDeniedError(console.read_only_reason or "this console cannot acknowledge alerts")
    form = await request.form()
    rule, key = str(form.get("rule") or ""), str(form.get("key") or "")
    reason = str(form.get("reason") or "") or None
    who = viewer.name
    event = await console.store.call(
        lambda: decide("acknowledged", rule, key, who, reason, None, viewer.principal.name)
    )
    console.store.results.clear()  # the page it goes back to shows this acknowledgement
    return RedirectResponse(f"/alerts?acked={quote(event.event_id)}", status_code=303)


ROUTES = [("/alerts", alerts_list, ["GET"], "query"), ("/alerts/ack", alert_ack, ["POST"], "review")]
