"""Redaction of attributes before storage: drop or hash by key.

Rules from a file are regular expressions matched (``re.search``, case-insensitive) against the attribute key.
The default rule drops credential-like keys and keeps everything else: a key is credential-like when one of its
words, or two adjacent words written together, is a credential word (``CREDENTIAL_WORDS``), where a key's words
are what is between ``.``, ``_``, ``-`` (and other non-alphanumerics) and camelCase boundaries:
``aws_secret_access_key``, ``clientSecret``, ``openai.api_key.primary`` and ``x-api-key`` are all caught. Token
*counts* are not credentials: ``tokens`` is no credential word (``gen_ai.usage.input_tokens``), ``token``
followed by a counting word (``llm.token_count.prompt``, ``gen_ai.token.type``) is kept, and so is ``token`` after a
word that measures model tokens (``gen_ai.server.time_to_first_token``, ``time_per_output_token``). No key of the
GenAI, OpenInference or OpenLLMetry conventions is dropped (tests/fidelity3/test_redaction_conventions.py).

Decisions are cached per key, and a set of known-safe keys lets the common case (no sensitive key in a span) cost
one C-level set check.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from otel_agent.errors import ConfigError


class Action(StrEnum):
    KEEP = "keep"
    DROP = "drop"
    HASH = "hash"


@dataclass(frozen=True)
class Rule:
    """A rule of a rules file: ``pattern`` is searched for in the key, case-insensitively."""

    pattern: str
    action: Action

    def matches(self, key: str) -> bool:
        return re.search(self.pattern, key, re.IGNORECASE) is not None


CREDENTIAL_WORDS = frozenset(
    {
        "authorization",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "secrets",
        "token",
        "bearer",
        "jwt",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        # written as one word, or two adjacent words together
        "apikey",
        "apikeys",
        "apitoken",
        "apitokens",
        "accesskey",
        "accesstokens",
        "authtokens",
        "privatekey",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "basicauth",
        "connectionstring",  # db.connection_string carries the password (the semantic conventions say so)
    }
)
"""A key with one of these words (or two adjacent words that make one, like ``api`` + ``key``) is dropped."""

CREDENTIAL_PARTS = ("password", "passwd", "passphrase", "apikey")
"""Found inside a word too: ``PGPASSWORD``, ``MYSQL_ROOT_PASSWORD`` as one glued word, ``XAPIKEY``."""

TOKEN_COUNT_WORDS = frozenset({"count", "counts", "usage", "type", "limit", "budget", "total", "estimate"})
"""``token`` followed by one of these words is a count or a kind of token, not a credential."""

TOKEN_MEASURE_WORDS = frozenset(
    {
        "first",
        "last",
        "next",
        "per",
        "each",
        "input",
        "output",
        "prompt",
        "completion",
        "generated",
        "reasoning",
        "cached",
    }
)
"""``token`` after one of these words is a model token being measured (``gen_ai.server.time_to_first_token``,
``gen_ai.server.time_per_output_token``: the GenAI conventions' metric names, which instrumentations also put on
spans), not a credential."""

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def key_words(key: str) -> list[str]:
    """The lowercase words of a key: split at every non-alphanumeric and at camelCase boundaries
    (``AWSSecretAccessKey`` → aws, secret, access, key)."""
    return [word.lower() for word in _WORD.findall(key)]


def is_credential_key(key: str) -> bool:
    """Whether the default rule drops ``key`` (see the module docstring)."""
    words = key_words(key)
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else ""
        preceding = words[i - 1] if i > 0 else ""
        if word in CREDENTIAL_WORDS and not (
            word == "token" and (following in TOKEN_COUNT_WORDS or preceding in TOKEN_MEASURE_WORDS)
        ):
            return True
        if following and word + following in CREDENTIAL_WORDS:
            return True
        if any(part in word for part in CREDENTIAL_PARTS):
            return True
    return False


@dataclass(frozen=True)
class CredentialRule(Rule):
    """The default rule: drop every credential-like key (``is_credential_key``; ``pattern`` only names it)."""

    pattern: str = "credential words"
    action: Action = Action.DROP

    def matches(self, key: str) -> bool:
        return is_credential_key(key)


DEFAULT_RULES: tuple[Rule, ...] = (CredentialRule(),)


def load_rules(path: str | Path | None, use_defaults: bool = True) -> tuple[Rule, ...]:
    """Rules from a JSON file ``[{"match": REGEX, "action": "drop"|"hash"|"keep"}, ...]``.

    File rules are checked first (so a ``keep`` rule can exempt a key from the defaults), then the defaults.
    """
    rules: list[Rule] = []
    if path:
        try:
            raw = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read redaction rules {path}: {exc}") from exc
        if not isinstance(raw, list):
            raise ConfigError(f"redaction rules {path}: expected a JSON list of rules")
        for i, item in enumerate(raw):
            try:
                pattern, action = item["match"], Action(item["action"])
                re.compile(pattern)
            except (KeyError, TypeError, ValueError, re.error) as exc:
                raise ConfigError(f"redaction rules {path}: rule {i} is invalid: {exc}") from exc
            rules.append(Rule(pattern, action))
    if use_defaults:
        rules.extend(DEFAULT_RULES)
    return tuple(rules)


class Redactor:
    """Applies rules to attribute dicts in place; cheap when nothing needs redacting."""

    def __init__(self, rules: tuple[Rule, ...] = DEFAULT_RULES) -> None:
        self.rules = rules
        self._decisions: dict[str, Action] = {}
        self._safe: set[str] = set()

    def decide(self, key: str) -> Action:
        action = self._decisions.get(key)
        if action is None:
            action = next((r.action for r in self.rules if r.matches(key)), Action.KEEP)
            if len(self._decisions) < 100_000:
                self._decisions[key] = action
                if action is Action.KEEP:
                    self._safe.add(key)
        return action

    def apply(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not self.rules or self._safe.issuperset(attrs):
            return attrs
        for key in list(attrs):
            action = self.decide(key)
            if action is Action.DROP:
                del attrs[key]
            elif action is Action.HASH:
                digest = hashlib.sha256(json.dumps(attrs[key], sort_keys=True).encode()).hexdigest()
                attrs[key] = "sha256:" + digest
        return attrs
