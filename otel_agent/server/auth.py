"""Bearer-token authentication: a tokens file maps each token to a principal and its roles.

Tokens file (JSON)::

    {"tokens": [{"token": "s3cret", "principal": "research-agent", "roles": ["ingest"]},
                {"token_sha256": "<hex>", "principal": "alice", "roles": ["query", "review"]}]}

``token_sha256`` lets the file hold only a hash of the token. Without a tokens file authentication is off
and every caller is anonymous with every role (the receiver then binds loopback only, unless --insecure).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from pathlib import Path

from otel_agent.errors import ConfigError, PermissionDeniedError, UnauthenticatedError

ROLES = frozenset({"ingest", "query", "review"})


@dataclass(frozen=True)
class Principal:
    """Who sent a request (None when authentication is off) and the roles it holds."""

    name: str | None
    roles: frozenset[str]


ANONYMOUS = Principal(None, ROLES)


_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
_FIELDS = ("token", "token_sha256", "principal", "roles")


def parse_tokens(doc: object, path: str) -> dict[str, Principal]:
    """sha256(token) → principal from a parsed tokens file; a ConfigError naming the entry and the field
    for anything it cannot use (so a typo never silently locks a client out or lets one in)."""

    def bad(message: str) -> ConfigError:
        return ConfigError(f"invalid tokens file {path}: {message}")

    if not isinstance(doc, dict):
        raise bad(f'expected an object {{"tokens": [...]}} at the top, found {type(doc).__name__}')
    tokens = doc.get("tokens")
    if not isinstance(tokens, list):
        raise bad('"tokens" must be a list of entries' + ("" if "tokens" in doc else ' (no "tokens" field)'))
    if not tokens:
        raise bad('"tokens" is empty: give at least one entry, or no --tokens-file to turn authentication off')
    entries: dict[str, Principal] = {}
    where: dict[str, str] = {}
    for i, item in enumerate(tokens):
        entry = f"tokens[{i}]"
        if not isinstance(item, dict):
            raise bad(f"{entry} must be an object, found {type(item).__name__}")
        principal = item.get("principal")
        if principal is not None and isinstance(principal, str) and principal.strip():
            entry += f" (principal {principal!r})"
        unknown_fields = sorted(set(item) - set(_FIELDS))
        if unknown_fields:
            raise bad(f"{entry}: unknown field {unknown_fields[0]!r} (fields: {', '.join(_FIELDS)})")
        if "principal" not in item:
            raise bad(f"{entry}: missing field 'principal'")
        if not isinstance(principal, str) or not principal.strip():
            raise bad(f"{entry}: field 'principal' must be a non-empty string")
        roles = item.get("roles", [])
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise bad(f"{entry}: field 'roles' must be a list of {sorted(ROLES)}")
        unknown = set(roles) - ROLES
        if unknown:
            raise bad(f"{entry}: field 'roles' has unknown roles {sorted(unknown)} (known: {sorted(ROLES)})")
        if ("token" in item) == ("token_sha256" in item):
            raise bad(f"{entry}: needs exactly one of the fields 'token' and 'token_sha256'")
        if "token_sha256" in item:
            field, digest = "token_sha256", str(item["token_sha256"]).strip().lower()
            if not _SHA256_HEX.match(digest):
                raise bad(f"{entry}: field 'token_sha256' must be 64 hex digits")
        else:
            field, token = "token", item["token"]
            if not isinstance(token, str) or not token.strip():
                raise bad(f"{entry}: field 'token' must be a non-empty string")
            digest = hashlib.sha256(token.strip().encode()).hexdigest()
        if digest in entries:
            raise bad(f"{entry}: field {field!r} repeats the token of {where[digest]}")
        entries[digest] = Principal(principal, frozenset(roles))
        where[digest] = entry
    return entries


class Authenticator:
    """Checks bearer tokens against the tokens file's sha256 digests."""

    def __init__(self, entries: dict[str, Principal] | None) -> None:
        # sha256(token) hex → principal; None means authentication is off.
        self._by_hash = entries

    @property
    def enabled(self) -> bool:
        """False when no tokens file was given: every caller is anonymous with every role."""
        return self._by_hash is not None

    @classmethod
    def from_file(cls, path: str | Path | None) -> Authenticator:
        """The authenticator of a tokens file (``--tokens-file``); authentication off when ``path`` is empty."""
        if not path:
            return cls(None)
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read tokens file {path}: {exc.strerror or exc}") from exc
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"cannot read tokens file {path}: not JSON ({exc})") from exc
        return cls(parse_tokens(doc, str(path)))

    def authenticate(self, authorization: str | None, role: str | None) -> Principal:
        """The principal behind an ``Authorization`` header value, checked for ``role`` (None: any role;
        the token only has to be known)."""
        if self._by_hash is None:
            return ANONYMOUS
        if not authorization:
            raise UnauthenticatedError("missing bearer token")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthenticatedError("expected 'Authorization: Bearer <token>'")
        digest = hashlib.sha256(token.strip().encode()).hexdigest()
        principal = None
        for known, who in self._by_hash.items():
            if hmac.compare_digest(known, digest):
                principal = who
        if principal is None:
            raise UnauthenticatedError("unknown bearer token")
        if role is not None and role not in principal.roles:
            raise PermissionDeniedError(f"principal {principal.name!r} lacks the {role!r} role")
        return principal
