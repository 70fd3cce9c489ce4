"""The alert rules file (TOML, or YAML when PyYAML is installed): parsing, validation, and each rule's query.

A rule is a name, a kind with its parameters, a severity and an optional ``for`` (how long its condition must
hold, across evaluations, before it fires). Every kind is one read-only SELECT over the public views (the same
sandbox as ``POST /v1/query``: ``query.readonly.run_query``) whose rows are the alerts firing now, each with a
``key`` column (which operation, run, provider…) and a ``summary``; the row itself is the alert's evidence.

Everything is checked when the file is loaded, so a receiver with a bad rule does not start: ``load_rules``
raises ``AlertRulesError`` (a ``ConfigError``: one line, exit code 2) naming the file, the rule and the field.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from otel_agent.errors import ConfigError, QueryRejectedError

SEVERITIES = ("info", "warning", "critical")
RECEIPT_STATES = ("stuck", "orphaned", "outcome_failed", "uncertain")
KINDS = ("receipt", "run_abandoned", "error_rate", "cost", "budget_exceeded", "guard_blocks", "sql")
GROUP_BY = ("service_name", "workflow_name", "agent_name")
"""Columns of ``runs`` a run-window rule may group its alerts by (one alert per value)."""
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_ALERTS_PER_RULE = 1000
"""Rows of one rule's query taken as alerts; more are cut (and the cut is logged)."""

NOW = "CAST($now AS TIMESTAMP)"
"""The evaluation's time (UTC), a parameter of every built-in kind: the evaluator passes the time it evaluates at,
so a rule's result depends only on the data and that time (and a test evaluates at any time it chooses)."""
SINCE = f"{NOW} - to_microseconds(CAST($window_s * 1e6 AS BIGINT))"


class AlertRulesError(ConfigError):
    """The rules file cannot be used: one line naming the file, the rule and what is wrong."""


def parse_duration(text: Any, what: str) -> float:
    """``90s``, ``15m``, ``2h``, ``1d``, ``500ms`` or a number of seconds → seconds."""
    if isinstance(text, bool):
        raise ValueError(f"{what}: expected a duration such as 90s, 15m or 2h, not {text!r}")
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|[smhdw]?)\s*", str(text))
        if not match:
            raise ValueError(f"{what}: expected a duration such as 90s, 15m or 2h, not {str(text)[:40]!r}")
        seconds = float(match[1]) * _UNITS[match[2] or "s"]
    if seconds < 0 or seconds > 366 * 86400:
        raise ValueError(f"{what}: {text!r} is outside 0 s – 366 d")
    return seconds


def human(seconds: float) -> str:
    """A window as a rule's summary says it: ``1h``, ``15m``, ``90s``, ``1h30m``."""
    whole = int(seconds)
    if whole != seconds or whole == 0:
        return f"{seconds:g}s"
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size:
            out += f"{whole // size}{unit}"
            whole %= size
    return out


@dataclass(frozen=True)
class Rule:
    """One checked rule: its name, kind and parameters, and the SELECT (with named parameters) it runs."""

    name: str
    kind: str
    severity: str
    for_s: float
    sql: str
    params: dict[str, Any]
    description: str = ""

    def describe(self) -> str:
        return f"{self.name} ({self.kind}, {self.severity})"

    @property
    def shared_query(self) -> tuple[Any, ...] | None:
        """Rules with the same value run one query per evaluation, their rows told apart by ``state``: the
        receipt rules with the same windows (``receipt_state_at`` is most of an evaluation's cost)."""
        if self.kind != "receipt":
            return None
        return ("receipt", self.params["ack_s"], self.params["progress_s"], self.params["verification_s"])


@dataclass(frozen=True)
class Webhook:
    """Where alert events are POSTed, signed with HMAC-SHA256 of the body under ``secret``."""

    url: str
    secret: bytes
    timeout_s: float = 5.0
    max_attempts: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    queue_size: int = 1000


@dataclass(frozen=True)
class RuleSet:
    """A loaded rules file."""

    rules: tuple[Rule, ...] = ()
    webhook: Webhook | None = None
    source: str = ""
    by_name: dict[str, Rule] = field(default_factory=dict)


# --- the kinds ----------------------------------------------------------------------------------------------------


def _receipt(p: _Params) -> tuple[str, dict[str, Any]]:
    state = p.choice("state", RECEIPT_STATES)
    window = p.duration("window", None)
    windows = {"ack_s": 120.0, "progress_s": 900.0, "verification_s": 120.0}
    # The window of the state's own rule (docs/views-evidence.md "Handoff receipts"): stuck = no progress within
    # the progress window, orphaned = not accepted within the acknowledgement window, outcome_failed = a
    # completion not verified within the verification window. Uncertain has no window: use ``for``.
    slot = {"stuck": "progress_s", "orphaned": "ack_s", "outcome_failed": "verification_s"}.get(state)
    if window is not None:
        if slot is None:
            raise ValueError("window: an uncertain receipt has no window (its records disagree); use 'for'")
        windows[slot] = window
    for name in ("ack_window", "progress_window", "verification_window"):
        value = p.duration(name, None)
        if value is not None:
            windows[name.replace("_window", "_s")] = value
    sql = f"""
SELECT operation_id AS key,
       'handoff ' || operation_id || ' is ' || state || ': ' || why AS summary,
       operation_id, state, why, current_handoff_id AS handoff_id, attempts, delegator, acceptors,
       expected_artifact, last_transition_at
FROM receipt_state_at({NOW},
    ack_window := to_microseconds(CAST($ack_s * 1e6 AS BIGINT)),
    progress_window := to_microseconds(CAST($progress_s * 1e6 AS BIGINT)),
    verification_window := to_microseconds(CAST($verification_s * 1e6 AS BIGINT)))
WHERE list_contains($states, state)
ORDER BY last_transition_at, operation_id"""
    return sql, {"states": [state], **windows}


def _run_abandoned(p: _Params) -> tuple[str, dict[str, Any]]:
    # runs.status 'abandoned': a running run silent for the receiver's --run-silence-s (the runs view turns it
    # when read, against the store's clock); lookback: runs whose last activity is older are history, not alerts.
    lookback = p.duration("lookback", 86400.0)
    sql = f"""
SELECT run_id AS key,
       'run ' || run_id || coalesce(' (' || workflow_name || ')', '') || ' was abandoned: no activity since '
           || strftime(CAST(last_activity_time AS TIMESTAMP), '%Y-%m-%dT%H:%M:%SZ')
           || coalesce(', in step ' || current_step, '') AS summary,
       run_id, workflow_name, agent_name, service_name, trace_id, status, start_time, last_activity_time,
       current_step, span_count
FROM runs
WHERE status = 'abandoned' AND coalesce(last_activity_time, start_time) >= {SINCE}
ORDER BY last_activity_time, run_id"""
    return sql, {"window_s": lookback}


def _group(p: _Params) -> tuple[str, str]:
    """(the grouping column followed by a comma, or nothing; the key's SQL: the group's value, or 'all')."""
    by = p.get("group_by")
    if by is None:
        return "", "'all'"
    if by not in GROUP_BY:
        raise ValueError(f"group_by: one of {', '.join(GROUP_BY)}, not {str(by)[:40]!r}")
    return f"{by}, ", f"coalesce({by}, '(none)')"


def _error_rate(p: _Params) -> tuple[str, dict[str, Any]]:
    of = p.choice("of", ("runs", "providers"), default="runs")
    window = p.duration("window", 3600.0)
    threshold = p.number("threshold", None, low=0.0, high=1.0)
    min_count = int(p.number("min_count", 5, low=1))
    if of == "providers":
        if p.get("group_by") is not None:
            raise ValueError("group_by: a provider error rate is per provider and model already")
        sql = f"""
SELECT provider || '/' || coalesce(model, '?') AS key,
       provider || ' ' || coalesce(model, '?') || ': ' || errors || ' of ' || calls || ' calls in error ('
           || round(100 * error_rate, 1) || '% > ' || round(100 * $threshold, 1) || '%)' AS summary,
       provider, model, calls, errors, error_rate, first_call_at, last_call_at
FROM provider_health_between({SINCE}, {NOW})
WHERE calls >= $min_count AND error_rate > $threshold
ORDER BY error_rate DESC, key"""
    else:
        column, key = _group(p)
        sql = f"""
SELECT k AS key,
       'runs' || CASE WHEN k = 'all' THEN '' ELSE ' of ' || k END || ': ' || errors || ' of ' || runs
           || ' in error (' || round(100 * error_rate, 1) || '% > ' || round(100 * $threshold, 1) || '%)' AS summary,
       * EXCLUDE (k)
FROM (
    SELECT {key} AS k, {column}count(*) AS runs, count(*) FILTER (WHERE status = 'error') AS errors,
           count(*) FILTER (WHERE status = 'error') / count(*) AS error_rate,
           min(start_time) AS first_run_at, max(start_time) AS last_run_at
    FROM runs WHERE start_time >= {SINCE}
    GROUP BY ALL
)
WHERE runs >= $min_count AND error_rate > $threshold
ORDER BY error_rate DESC, key"""
    return sql, {"window_s": window, "threshold": threshold, "min_count": min_count}


def _cost(p: _Params) -> tuple[str, dict[str, Any]]:
    per = p.choice("per", ("hour", "run", "window"), default="hour")
    budget = p.number("budget_usd", None, low=0.0)
    if per == "run":
        lookback = p.duration("lookback", 86400.0)
        sql = f"""
SELECT run_id AS key,
       'run ' || run_id || coalesce(' (' || workflow_name || ')', '') || ' cost $' || round(cost_usd, 4)
           || ' > $' || $budget AS summary,
       run_id, workflow_name, agent_name, service_name, status, cost_usd, unpriced_calls, provider_calls,
       start_time, end_time
FROM runs
WHERE cost_usd > $budget AND start_time >= {SINCE}
ORDER BY cost_usd DESC, run_id"""
        return sql, {"window_s": lookback, "budget": budget}
    window = 3600.0 if per == "hour" else p.duration("window", None)
    if window is None:
        raise ValueError("window: a cost per window needs its duration (per = 'hour' is 1h)")
    column, key = _group(p)
    sql = f"""
SELECT k AS key,
       'cost' || CASE WHEN k = 'all' THEN '' ELSE ' of ' || k END || ' in the last ' || $window_text || ': $'
           || round(cost_usd, 4) || ' > $' || $budget AS summary,
       * EXCLUDE (k)
FROM (
    SELECT {key} AS k, {column}sum(cost_usd) AS cost_usd, count(*) AS runs, sum(unpriced_calls) AS unpriced_calls,
           min(start_time) AS first_run_at, max(start_time) AS last_run_at
    FROM runs WHERE start_time >= {SINCE}
    GROUP BY ALL
)
WHERE cost_usd > $budget
ORDER BY cost_usd DESC, key"""
    return sql, {"window_s": window, "window_text": human(window), "budget": budget}


def _budget_exceeded(p: _Params) -> tuple[str, dict[str, Any]]:
    lookback = p.duration("lookback", 86400.0)
    sql = f"""
SELECT run_id AS key,
       'run ' || run_id || coalesce(' (' || workflow_name || ')', '') || ' exceeded its budget: '
           || array_to_string(budget_exceeded_limits, ', ') AS summary,
       run_id, workflow_name, agent_name, service_name, status, budget_exceeded_limits, provider_calls,
       budget_max_model_calls, tool_invocations, budget_max_tool_calls, cost_usd, budget_max_cost_usd, start_time
FROM runs
WHERE budget_exceeded AND start_time >= {SINCE}
ORDER BY start_time, run_id"""
    return sql, {"window_s": lookback}


def _guard_blocks(p: _Params) -> tuple[str, dict[str, Any]]:
    window = p.duration("window", 3600.0)
    above = int(p.number("above", 0, low=0))
    column, key = _group(p)
    sql = f"""
SELECT k AS key,
       'guard blocks' || CASE WHEN k = 'all' THEN '' ELSE ' in ' || k END || ' in the last ' || $window_text
           || ': ' || guard_blocks || ' > ' || $above AS summary,
       * EXCLUDE (k)
FROM (
    SELECT {key} AS k, {column}sum(guard_blocks) AS guard_blocks, sum(guard_checks) AS guard_checks,
           count(*) FILTER (WHERE guard_blocks > 0) AS runs_blocked, min(start_time) AS first_run_at,
           max(start_time) AS last_run_at
    FROM runs WHERE start_time >= {SINCE}
    GROUP BY ALL
)
WHERE guard_blocks > $above
ORDER BY guard_blocks DESC, key"""
    return sql, {"window_s": window, "window_text": human(window), "above": above}


def _sql(p: _Params) -> tuple[str, dict[str, Any]]:
    query = p.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query: a SELECT over the public views whose rows are the firing alerts (with a key column)")
    sql = query.strip().rstrip(";")
    from otel_agent.query.readonly import check_statement

    con = duckdb.connect(":memory:")
    try:
        check_statement(con, sql)  # the query API's guard: one read statement, no refused function
    except QueryRejectedError as exc:
        raise ValueError(f"query: {exc}") from None
    finally:
        con.close()
    return sql, {}


BUILDERS: dict[str, Callable[[_Params], tuple[str, dict[str, Any]]]] = {
    "receipt": _receipt,
    "run_abandoned": _run_abandoned,
    "error_rate": _error_rate,
    "cost": _cost,
    "budget_exceeded": _budget_exceeded,
    "guard_blocks": _guard_blocks,
    "sql": _sql,
}
COMMON = {"name", "kind", "severity", "for", "description"}
ALLOWED: dict[str, set[str]] = {
    "receipt": {"state", "window", "ack_window", "progress_window", "verification_window"},
    "run_abandoned": {"lookback"},
    "error_rate": {"of", "window", "threshold", "min_count", "group_by"},
    "cost": {"per", "budget_usd", "window", "lookback", "group_by"},
    "budget_exceeded": {"lookback"},
    "guard_blocks": {"window", "above", "group_by"},
    "sql": {"query"},
}


class _Params:
    """A rule's table, read field by field; every read field is remembered, so unknown ones can be refused."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def get(self, name: str) -> Any:
        return self.doc.get(name)

    def choice(self, name: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self.doc.get(name, default)
        if value not in choices:
            raise ValueError(f"{name}: one of {', '.join(choices)}, not {str(value)[:40]!r}")
        return str(value)

    def duration(self, name: str, default: float | None) -> Any:
        value = self.doc.get(name)
        return default if value is None else parse_duration(value, name)

    def number(self, name: str, default: float | None, low: float | None = None, high: float | None = None) -> float:
        value = self.doc.get(name, default)
        if value is None:
            raise ValueError(f"{name} is required")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name}: a number, not {str(value)[:40]!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"{low if low is not None else '-inf'}…{high if high is not None else 'inf'}"
            raise ValueError(f"{name}: {value} is outside {bounds}")
        return float(value)


def build_rule(doc: Any) -> Rule:
    """One rule from its table (a dict), or ``ValueError`` saying which field is wrong."""
    if not isinstance(doc, dict):
        raise ValueError("a rule is a table of fields (name, kind, …)")
    name = doc.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise ValueError("name: letters, digits, _ . - (a letter first, at most 64)")
    kind = doc.get("kind")
    if kind not in BUILDERS:
        raise ValueError(f"kind: one of {', '.join(KINDS)}, not {str(kind)[:40]!r}")
    unknown = sorted(set(doc) - COMMON - ALLOWED[kind])
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r} for kind {kind} (fields: {', '.join(sorted(ALLOWED[kind]))})")
    severity = doc.get("severity", "warning")
    if severity not in SEVERITIES:
        raise ValueError(f"severity: one of {', '.join(SEVERITIES)}, not {str(severity)[:40]!r}")
    for_s = parse_duration(doc.get("for", 0), "for")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise ValueError("description: text")
    sql, params = BUILDERS[kind](_Params(doc))
    return Rule(name, kind, severity, for_s, sql, params, description)


def _webhook(doc: Any, environ: dict[str, str]) -> Webhook:
    if not isinstance(doc, dict):
        raise ValueError("webhook: a table (url, secret_env or secret_file, …)")
    allowed = {"url", "secret_env", "secret_file", "timeout", "max_attempts", "backoff", "max_backoff", "queue_size"}
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ValueError(f"webhook: unknown field {unknown[0]!r} (fields: {', '.join(sorted(allowed))})")
    url = doc.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
        raise ValueError("webhook.url: an http:// or https:// URL")
    if ("secret_env" in doc) == ("secret_file" in doc):
        raise ValueError("webhook: give exactly one of secret_env (a variable's name) or secret_file (a path)")
    if "secret_env" in doc:
        secret = environ.get(str(doc["secret_env"]), "")
        if not secret:
            raise ValueError(f"webhook.secret_env: the environment variable {str(doc['secret_env'])[:64]} is not set")
        key = secret.encode()
    else:
        try:
            key = Path(str(doc["secret_file"])).read_bytes().strip()
        except OSError as exc:
            raise ValueError(f"webhook.secret_file: {exc.strerror or exc}") from None
        if not key:
            raise ValueError("webhook.secret_file is empty")
    p = _Params(doc)
    return Webhook(
        url=url,
        secret=key,
        timeout_s=p.duration("timeout", 5.0) or 5.0,
        max_attempts=int(p.number("max_attempts", 6, low=1, high=100)),
        backoff_s=p.duration("backoff", 1.0),
        max_backoff_s=p.duration("max_backoff", 60.0),
        queue_size=int(p.number("queue_size", 1000, low=1, high=1_000_000)),
    )


def parse_rules(
    text: str, source: str = "rules", *, yaml: bool = False, environ: dict[str, str] | None = None
) -> RuleSet:
    """A rules document (TOML, or YAML) → ``RuleSet``; ``AlertRulesError`` (one line) for anything wrong."""
    try:
        doc = _load_yaml(text) if yaml else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AlertRulesError(f"{source}: not valid {'YAML' if yaml else 'TOML'}: {first}") from None
    if not isinstance(doc, dict):
        raise AlertRulesError(f"{source}: expected a document with [[rule]] tables")
    unknown = sorted(set(doc) - {"rule", "webhook"})
    if unknown:
        raise AlertRulesError(f"{source}: unknown section {unknown[0]!r} (sections: [[rule]], [webhook])")
    items = doc.get("rule", [])
    if not isinstance(items, list):
        raise AlertRulesError(f"{source}: 'rule' is a list of tables ([[rule]] in TOML, rule: - … in YAML)")
    rules: list[Rule] = []
    for i, item in enumerate(items, 1):
        label = item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else f"#{i}"
        try:
            rule = build_rule(item)
        except ValueError as exc:
            raise AlertRulesError(f"{source}: rule {str(label)[:64]}: {exc}") from None
        if any(r.name == rule.name for r in rules):
            raise AlertRulesError(f"{source}: rule {rule.name}: a second rule has this name")
        rules.append(rule)
    webhook = None
    if "webhook" in doc:
        try:
            webhook = _webhook(doc["webhook"], dict(os.environ) if environ is None else environ)
        except ValueError as exc:
            raise AlertRulesError(f"{source}: {exc}") from None
    return RuleSet(tuple(rules), webhook, source, {r.name: r for r in rules})


def _load_yaml(text: str) -> Any:
    try:
        import yaml  # PyYAML: optional; TOML needs nothing
    except ImportError:
        raise ValueError("PyYAML is not installed (pip install pyyaml), or write the rules in TOML") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())[:200]) from None


def load_rules(path: str, environ: dict[str, str] | None = None) -> RuleSet:
    """Read and check the rules file at ``path`` (``.yaml`` / ``.yml``: YAML; anything else: TOML)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AlertRulesError(f"--alert-rules {path}: cannot read it: {why}") from None
    is_yaml = Path(path).suffix.lower() in (".yaml", ".yml")
    return parse_rules(text, str(path), yaml=is_yaml, environ=environ)
