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
from dataclasses import dataclass
from pathlib import Path

from otel_agent.errors import ConfigError, PermissionDeniedError, UnauthenticatedError

ROLES = frozenset({"ingest", "query", "review"})


@dataclass(frozen=True)
class Principal:
    name: str | None
    roles: frozenset[str]


ANONYMOUS = Principal(None, ROLES)


class Authenticator:
    def __init__(self, entries: dict[str, Principal] | None) -> None:
        # sha256(token) hex → principal; None means authentication is off.
        self._by_hash = entries

    @property
    def enabled(self) -> bool:
        return self._by_hash is not None

    @classmethod
    def from_file(cls, path: str | Path | None) -> Authenticator:
        if not path:
            return cls(None)
        try:
            doc = json.loads(Path(path).read_text())
            entries: dict[str, Principal] = {}
            for i, item in enumerate(doc["tokens"]):
                roles = frozenset(item.get("roles", []))
                unknown = roles - ROLES
                if unknown:
                    raise ConfigError(f"tokens file {path}: entry {i} has unknown roles {sorted(unknown)}")
                if "token_sha256" in item:
                    digest = str(item["token_sha256"]).lower()
                else:
                    digest = hashlib.sha256(str(item["token"]).encode()).hexdigest()
                entries[digest] = Principal(str(item["principal"]), roles)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read tokens file {path}: {exc}") from exc
        return cls(entries)

    def authenticate(self, authorization: str | None, role: str) -> Principal:
        """The principal behind an ``Authorization`` header value, checked for ``role``."""
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
        if role not in principal.roles:
            raise PermissionDeniedError(f"principal {principal.name!r} lacks the {role!r} role")
        return principal
