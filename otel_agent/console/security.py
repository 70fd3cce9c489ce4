"""Who may see and do what in the console, and the headers every console response carries.

- With a tokens file (``server.auth.Authenticator``): viewing needs the ``query`` role, acting the ``review``
  role. A browser signs in once with its token (``/signin``) and gets an opaque session id in an HttpOnly,
  SameSite=Strict cookie (the token itself is never stored in the browser); ``Authorization: Bearer`` headers are
  accepted too. Without a tokens file every caller is anonymous with every role (the receiver binds loopback
  only unless ``--insecure``).
- CSRF: every form carries a token derived (HMAC) from a random per-browser cookie (``oa_csrf``, SameSite=Strict,
  HttpOnly); a POST whose form token does not match its cookie is refused with 403, whatever its credentials.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from otel_agent.errors import PermissionDeniedError, UnauthenticatedError
from otel_agent.server.auth import Authenticator, Principal

SESSION_COOKIE = "oa_session"
CSRF_COOKIE = "oa_csrf"
SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 10_000

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Viewer:
    """The caller of a console page: its principal and what the page may offer it."""

    principal: Principal
    signed_in: bool  # through a session cookie (offer "sign out")
    csrf: str

    @property
    def name(self) -> str:
        """The reviewer recorded for this caller: the token's principal, else the local user (no auth)."""
        return self.principal.name or f"local:{_local_user()}"

    def can(self, role: str) -> bool:
        return role in self.principal.roles


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "anonymous"


class Security:
    def __init__(self, auth: Authenticator, secret: bytes | None = None) -> None:
        self.auth = auth
        self.secret = secret or os.urandom(32)
        self._sessions: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.auth.enabled

    # -- sessions --------------------------------------------------------------------------------------------
    def sign_in(self, token: str) -> str:
        """A new session id for a token with the ``query`` role (raises as ``authenticate`` does)."""
        principal = self.auth.authenticate(f"Bearer {token.strip()}", "query")
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[sid] = (principal, time.monotonic() + SESSION_TTL_S)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return sid

    def sign_out(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)

    def _session(self, sid: str | None) -> Principal | None:
        if not sid:
            return None
        with self._lock:
            found = self._sessions.get(sid)
            if found is None:
                return None
            principal, expires = found
            if time.monotonic() > expires:
                del self._sessions[sid]
                return None
        return principal

    # -- CSRF ------------------------------------------------------------------------------------------------
    def csrf_for(self, request: Request) -> tuple[str, str | None]:
        """(form token, new cookie value to set or None): the token is bound to the browser's csrf cookie."""
        cookie = request.cookies.get(CSRF_COOKIE)
        new = None
        if not cookie or len(cookie) > 100:
            cookie = new = secrets.token_urlsafe(24)
        return hmac.new(self.secret, cookie.encode(), hashlib.sha256).hexdigest(), new

    def check_csrf(self, request: Request, form_token: str | None) -> None:
        cookie = request.cookies.get(CSRF_COOKIE)
        if not cookie or not form_token:
            raise PermissionDeniedError("missing CSRF token: reload the page and try again")
        expected = hmac.new(self.secret, cookie.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, form_token):
            raise PermissionDeniedError("invalid CSRF token: reload the page and try again")

    # -- the caller ------------------------------------------------------------------------------------------
    def viewer(self, request: Request, role: str = "query") -> tuple[Viewer, str | None]:
        """The caller with ``role``, or raise ``UnauthenticatedError`` / ``PermissionDeniedError``."""
        csrf, new_cookie = self.csrf_for(request)
        header = request.headers.get("authorization")
        if header:
            return Viewer(self.auth.authenticate(header, role), False, csrf), new_cookie
        if not self.auth.enabled:
            return Viewer(self.auth.authenticate(None, role), False, csrf), new_cookie
        principal = self._session(request.cookies.get(SESSION_COOKIE))
        if principal is None:
            raise UnauthenticatedError("sign in with a token that has the query role")
        if role not in principal.roles:
            raise PermissionDeniedError(f"principal {principal.name!r} lacks the {role!r} role")
        return Viewer(principal, True, csrf), new_cookie


def secure(response: Response, csrf_cookie: str | None = None) -> Response:
    """Add the console's security headers (and a new CSRF cookie) to a response."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    if csrf_cookie:
        response.set_cookie(CSRF_COOKIE, csrf_cookie, httponly=True, samesite="strict", path="/")
    return response


def set_session(response: Response, sid: str) -> None:
    response.set_cookie(SESSION_COOKIE, sid, max_age=SESSION_TTL_S, httponly=True, samesite="strict", path="/")


def clear_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
