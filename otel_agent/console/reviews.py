"""Review actions from the console: ``POST <page>/review`` with the CSRF token (checked in ``app.page``).

They go through the same code as the ReviewService (``ReviewService.submit``: validation and the copy of the
record on a read cursor, the INSERT on the writer thread), so rows land in ``reviews`` append-only, with the
signed-in principal as both reviewer and principal — never a free-text name.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from otel_agent.console.security import Viewer
from otel_agent.errors import InvalidPayloadError, PermissionDeniedError


async def review_action(request: Request, console: Any, viewer: Viewer, kinds: tuple[str, ...], back: str) -> Response:
    if not console.can_review:
        raise PermissionDeniedError(console.read_only_reason or "this console is read-only")
    form = await request.form()
    kind = str(form.get("target_kind") or "")
    if kind not in kinds:
        raise InvalidPayloadError(f"this page reviews {', '.join(kinds)}, not {kind[:40]!r}")
    target_id = str(form.get("target_id") or "")
    decision = str(form.get("decision") or "")
    reason = str(form.get("reason") or "") or None
    principal = viewer.principal.name  # None without a tokens file
    record = await console.store.call(
        lambda: console.submit_review(kind, target_id, decision, viewer.name, reason, principal)
    )
    console.store.results.clear()  # the page it goes back to shows this review, not results read before it
    sep = "&" if "?" in back else "?"
    return RedirectResponse(f"{back}{sep}reviewed={quote(record.review_id)}", status_code=303)
