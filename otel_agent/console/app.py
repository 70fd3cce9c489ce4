"""The console's routes, for ``otel-agent serve`` (mounted at ``/`` beside OTLP and the APIs) and for
``otel-agent ui`` (its own app over closed stores, read-only)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from otel_agent.console.as_json import json_error, json_path, json_response, wants_json
from otel_agent.console.render import render
from otel_agent.console.security import CSRF_COOKIE, Security, Viewer, clear_session, secure, set_session
from otel_agent.console.store import ConsoleStore
from otel_agent.errors import (
    InvalidPayloadError,
    NotFoundError,
    OtelAgentError,
    PermissionDeniedError,
    QueryRejectedError,
    QueryTimeoutError,
    UnauthenticatedError,
)
from otel_agent.read.reviews import Reviews

log = logging.getLogger(__name__)

ReviewSubmit = Callable[[str, str, str, str, str | None, str | None], Any]
"""(target_kind, target_id, decision, reviewer, reason, principal) → the review record (``read.reviews.Reviews``)."""

NAV = [
    ("runs", "/", "Runs"),
    ("search", "/search", "Search"),
    ("sessions", "/sessions", "Sessions"),
    ("claims", "/claims", "Evidence"),
    ("artifacts", "/artifacts", "Artifacts"),
    ("receipts", "/receipts", "Handoffs"),
    ("alerts", "/alerts", "Alerts"),
    ("providers", "/providers", "Observability"),
    ("context", "/context", "Context"),
    ("memory", "/memory", "Memory"),
    ("sql", "/sql", "SQL"),
]


@dataclass
class Console:
    store: ConsoleStore
    security: Security
    submit_review: ReviewSubmit | None = None
    decide_alert: Callable[..., Any] | None = None  # AlertService.decide of a receiver (pages/alerts.py)
    read_only_reason: str | None = None
    source: str = ""
    query_max_rows: int = 10_000
    query_timeout_s: float = 10.0

    @property
    def can_review(self) -> bool:
        return self.submit_review is not None

    def html(self, request: Request, viewer: Viewer | None, template: str, code: int = 200, **ctx: Any) -> Response:
        """The page, or its data as JSON when the request asks for it (``as_json``)."""
        if wants_json(request):
            return json_response(template, code, ctx)
        body = render(
            template,
            request=request,
            viewer=viewer,
            console=self,
            nav=NAV,
            args=dict(request.query_params),
            **ctx,
        )
        return HTMLResponse(body, status_code=code)


Handler = Callable[[Request, Console, Viewer], Awaitable[Response]]


def _error_page(
    console: Console, request: Request, viewer: Viewer | None, status: int, title: str, message: str
) -> Response:
    if wants_json(request):
        return json_error(status, title, message)
    if status == 401:  # the sign-in form itself, bound to this browser's CSRF cookie
        csrf, _ = console.security.csrf_for(request)
        path = request.url.path if request.method == "GET" else "/"
        return console.html(request, None, "signin.html", code=401, message=message, next=path, csrf=csrf)
    return console.html(request, viewer, "error.html", code=status, title=title, message=message)


def page(
    console: Console, handler: Handler, role: str = "query", as_json: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint: the caller checked for ``role``, the handler run, errors shown as pages, headers added;
    ``as_json``: the page's ``.json`` twin (its data as JSON, ``as_json.py``)."""

    async def endpoint(request: Request) -> Response:
        if as_json:
            request.state.json = True
        viewer: Viewer | None = None
        _, new_cookie = console.security.csrf_for(request)
        if new_cookie:  # the same cookie value for every form rendered in this response
            request.cookies[CSRF_COOKIE] = new_cookie
        try:
            viewer, _ = console.security.viewer(request, role)
            if request.method == "POST":
                await checked_form(console, request)
            response = await handler(request, console, viewer)
        except UnauthenticatedError as exc:
            response = _error_page(console, request, None, 401, "Sign in", str(exc))
        except PermissionDeniedError as exc:
            response = _error_page(console, request, viewer, 403, "Not allowed", str(exc))
        except NotFoundError as exc:
            response = _error_page(console, request, viewer, 404, "Not found", str(exc))
        except (InvalidPayloadError, QueryRejectedError) as exc:
            response = _error_page(console, request, viewer, 400, "Cannot do that", str(exc))
        except QueryTimeoutError as exc:
            response = _error_page(console, request, viewer, 504, "Too slow", str(exc))
        except OtelAgentError as exc:
            response = _error_page(console, request, viewer, 400, "Error", str(exc))
        except Exception:
            log.exception("console page %s failed", request.url.path)
            response = _error_page(console, request, viewer, 500, "Internal error", "the page failed; see the log")
        return secure(response, new_cookie)

    return endpoint


MAX_FORM_BYTES = 64 * 1024


async def read_bounded(request: Request, limit: int = MAX_FORM_BYTES) -> None:
    """Read a form body, refusing it past ``limit`` bytes (a review form is a few hundred bytes)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise InvalidPayloadError(f"form body larger than {limit} bytes")
        chunks.append(chunk)
    request._body = b"".join(chunks)  # Starlette's form parser reads the cached body


async def checked_form(console: Console, request: Request) -> FormData:
    """A POSTed form, read within ``MAX_FORM_BYTES`` (else ``InvalidPayloadError``) and carrying this browser's
    CSRF token (else ``PermissionDeniedError``)."""
    await read_bounded(request)
    form = await request.form()
    console.security.check_csrf(request, str(form.get("csrf") or ""))
    return form


def _safe_next(target: str | None) -> str:
    """Only a local path (no scheme, no //host): an open redirect would be a phishing aid."""
    target = target or "/"
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def auth_routes(console: Console) -> list[BaseRoute]:
    async def signin_get(request: Request) -> Response:
        csrf, new_cookie = console.security.csrf_for(request)
        response = console.html(
            request, None, "signin.html", message="", next=_safe_next(request.query_params.get("next")), csrf=csrf
        )
        return secure(response, new_cookie)

    async def auth_form(request: Request) -> FormData | Response:
        """The sign-in or sign-out form, or the error page for a form too large (413) or without its token (403)."""
        try:
            return await checked_form(console, request)
        except InvalidPayloadError as exc:
            return secure(console.html(request, None, "error.html", 413, title="Too large", message=str(exc)))
        except PermissionDeniedError as exc:
            return secure(console.html(request, None, "error.html", 403, title="Not allowed", message=str(exc)))

    async def signin_post(request: Request) -> Response:
        form = await auth_form(request)
        if isinstance(form, Response):
            return form
        csrf, new_cookie = console.security.csrf_for(request)
        try:
            sid = console.security.sign_in(str(form.get("token") or ""))
        except (UnauthenticatedError, PermissionDeniedError) as exc:
            status = 403 if isinstance(exc, PermissionDeniedError) else 401
            response = console.html(
                request, None, "signin.html", status, message=str(exc), next=_safe_next(str(form.get("next") or "")),
                csrf=csrf,
            )  # fmt: skip
            return secure(response, new_cookie)
        response = RedirectResponse(_safe_next(str(form.get("next") or "/")), status_code=303)
        set_session(response, sid)
        return secure(response)

    async def signout_post(request: Request) -> Response:
        form = await auth_form(request)
        if isinstance(form, Response):
            return form
        console.security.sign_out(request.cookies.get("oa_session"))
        response = RedirectResponse("/signin", status_code=303)
        clear_session(response)
        return secure(response)

    return [
        Route("/signin", signin_get, methods=["GET"]),
        Route("/signin", signin_post, methods=["POST"]),
        Route("/signout", signout_post, methods=["POST"]),
    ]


class SecureStatic(StaticFiles):
    """The vendored assets, with the console's headers (nosniff matters most here)."""

    async def get_response(self, path: str, scope: Any) -> Response:
        return secure(await super().get_response(path, scope))


def console_routes(console: Console) -> list[BaseRoute]:
    """Every console route; the OTLP and API routes are registered before these and keep their paths."""
    from otel_agent.console.pages import (
        alerts,
        artifacts,
        claims,
        context,
        memory,
        providers,
        receipts,
        run,
        runs,
        search,
        sessions,
        sql,
        trace,
    )  # fmt: skip

    static_dir = str(resources.files("otel_agent.console").joinpath("static"))
    routes: list[BaseRoute] = [Mount("/static", app=SecureStatic(directory=static_dir), name="static")]
    routes += auth_routes(console)
    pages: list[BaseRoute] = []
    pages_in_order = (
        runs,
        run,
        trace,
        search,
        sessions,
        claims,
        artifacts,
        receipts,
        alerts,
        providers,
        context,
        memory,
        sql,
    )
    for module in pages_in_order:
        for path, handler, methods, role in module.ROUTES:
            pages.append(Route(path, page(console, handler, role), methods=methods))
            if methods == ["GET"] and not path.endswith((".json", ".md")):  # a page, not a download
                # the twins first: /runs/{run_id} would otherwise take /runs/x.json as run "x.json"
                routes.append(Route(json_path(path), page(console, handler, role, as_json=True), methods=methods))
    routes += pages
    return routes


@dataclass
class Mounted:
    """A console and its routes, for a server to serve and to close when it stops (a receiver's face named
    ``console``: server.receiver.Face)."""

    console: Console
    routes: list[BaseRoute]
    name: str = "console"

    def close(self) -> None:
        self.console.store.close()


def receiver_console(receiver: Any) -> Mounted:
    """The console inside ``otel-agent serve`` (a face of the receiver, given to it by ``otel_agent.main``):
    cursors of the receiver's connection, its authenticator, its query limits, and review actions through the
    read layer's ``Reviews`` over its writer (the INSERT on the writer thread)."""
    config = receiver.config
    console = Console(
        store=ConsoleStore(
            receiver.con,
            workers=3,
            timeout_s=config.query_timeout_s,
            # what changes what a page shows: commits, and the maintained state's steps (the runs view's rows
            # change after the commit that brought their spans)
            generation=lambda: receiver.writer.stats.commits + receiver.derived.stats.steps,
            live=True,
        ),
        security=Security(receiver.auth),
        submit_review=Reviews(receiver.writer).submit,
        decide_alert=receiver.alerts.decide,
        source=f"live receiver · {Path(config.db).name}",  # the name only: the API hides the path too
        query_max_rows=config.query_max_rows,
        query_timeout_s=config.query_timeout_s,
    )
    return Mounted(console, console_routes(console))


READ_ONLY_REASON = (
    "Read-only: otel-agent ui opens closed files read-only. Review through a receiver serving the file "
    "(otel-agent serve --db FILE) or with otel-agent review."
)


def ui_console(
    dbs: list[str], auth: Any, *, archive: str | None = None, query_max_rows: int = 10_000,
    query_timeout_s: float = 10.0,
) -> Mounted:  # fmt: skip
    """The console of ``otel-agent ui``: one closed store, or several shards as one, opened read-only (with an
    ``archive``: raw tables live ∪ archive)."""
    from otel_agent.query.client import open_readonly

    con = open_readonly(dbs, archive)
    source = "read-only · " + ", ".join(Path(db).name for db in dbs) + (" + archive" if archive else "")
    console = Console(
        store=ConsoleStore(con, workers=3, timeout_s=query_timeout_s),
        security=Security(auth),
        read_only_reason=READ_ONLY_REASON,
        source=source,
        query_max_rows=query_max_rows,
        query_timeout_s=query_timeout_s,
    )
    return Mounted(console, console_routes(console))


def build_ui_app(mounted: Mounted) -> Starlette:
    return Starlette(routes=mounted.routes)


__all__ = ["Console", "build_ui_app", "console_routes"]
