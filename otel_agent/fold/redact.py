"""Redaction of attributes before storage: drop or hash by key pattern.

Rules are regular expressions matched (``re.search``, case-insensitive) against the attribute key. The
defaults drop credential-like keys and keep everything else. Decisions are cached per key, and a set of
known-safe keys lets the common case (no sensitive key in a span) cost one C-level set check.
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
    pattern: str
    action: Action

    def matches(self, key: str) -> bool:
        return re.search(self.pattern, key, re.IGNORECASE) is not None


# A key is credential-like when one of its dot/dash/underscore-separated words says so. "tokens" (as in
# gen_ai.usage.input_tokens) is deliberately not a match: only a segment that *is* a credential name.
DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(
        r"(^|[._-])(authorization|proxy[_-]authorization|api[_-]?key|x[_-]api[_-]key|password|passwd|pwd"
        r"|secret|client[_-]secret|token|access[_-]token|refresh[_-]token|id[_-]token|auth[_-]token"
        r"|bearer|cookie|set[_-]cookie|private[_-]key|credentials?|session[_-]token)$",
        Action.DROP,
    ),
)


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
