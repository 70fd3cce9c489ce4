"""The evaluator: every rule's query, every N seconds, off the ingest path; each alert's lifecycle appended.

One thread of its own runs the rules in turn on read-only cursors beside the writer (``query.readonly.run_query``:
the query API's sandbox, a deadline shared by the whole evaluation), so an evaluation never holds the writer
thread and never takes longer than its time budget: a rule it could not finish (or whose query failed) keeps its
alerts as they were, and is counted as failed. The alerts firing now are compared with the ones firing before,
by (rule, key): a new key is a ``firing`` event, a key gone is a ``resolved`` one, each with its evidence row.
The events of one evaluation are appended in one small transaction on the writer's thread (``writer.run_write``,
as reviews are), then handed to the notifier (the webhook's queue: never waited on).

A rule with ``for`` fires once its key has been in its result for that long across evaluations (pending
meanwhile, as Prometheus does), so a flapping condition is not an alert. At start the alerts still firing in the
store are taken as firing, so a restart neither fires them again nor forgets to resolve them.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from otel_agent.alerts.rules import MAX_ALERTS_PER_RULE, Rule, RuleSet
from otel_agent.errors import OtelAgentError
from otel_agent.query.readonly import run_query
from otel_agent.read.alerts import AlertEvent, evidence_json, insert_events, iso, new_event_id
from otel_agent.read.source import positional
from otel_agent.store.database import store_cursor

log = logging.getLogger(__name__)

MAX_KEY = 512
"""Longest alert key kept (a key comes from telemetry: hostile, bounded)."""
MAX_SUMMARY = 1024
LOGGED_EVENTS = 20
"""Events of one evaluation logged one by one; the rest are counted in one line."""

# The alerts firing in the store: the latest firing / resolved event of each (rule, key) is a firing one.
ACTIVE_SQL = """
SELECT rule, alert_key, evidence, summary, event_at
FROM (
    SELECT rule, alert_key, arg_max(event, (event_at, event_id)) AS last_event,
           arg_max(evidence, (event_at, event_id)) AS evidence, arg_max(summary, (event_at, event_id)) AS summary,
           max(event_at) AS event_at
    FROM alert_events WHERE event IN ('firing', 'resolved')
    GROUP BY rule, alert_key
)
WHERE last_event = 'firing'
"""

# The silences in force: the latest silenced / unsilenced event of each (rule, key) is a silence not yet over.
SILENCES_SQL = """
SELECT rule, alert_key, until
FROM (
    SELECT rule, alert_key, arg_max(event, (event_at, event_id)) AS last_event,
           arg_max(silenced_until, (event_at, event_id)) AS until
    FROM alert_events WHERE event IN ('silenced', 'unsilenced')
    GROUP BY rule, alert_key
)
WHERE last_event = 'silenced' AND until > now()
"""


@dataclass
class Firing:
    """An alert firing now: its last evidence row and summary."""

    evidence: dict[str, Any]
    summary: str
    since: str


@dataclass
class RuleStats:
    """One rule's figures for /metrics."""

    evaluations: int = 0
    failures: int = 0
    last_error: str | None = None
    last_seconds: float = 0.0
    cut: int = 0
    was_cut: bool = False


@dataclass
class EvaluatorStats:
    evaluations: int = 0
    last_seconds: float = 0.0
    last_at: float | None = None
    events: dict[str, int] = field(default_factory=lambda: {"firing": 0, "resolved": 0})
    rules: dict[str, RuleStats] = field(default_factory=dict)


def _key(value: Any) -> str:
    text = "" if value is None else str(value)
    return text[:MAX_KEY]


class Evaluator:
    """Evaluates ``rules`` on ``con``'s read cursors every ``interval_s``; appends events through ``writer``
    (``run_write``); calls ``notify(events, silenced)`` with each evaluation's events."""

    def __init__(
        self,
        con: Any,
        writer: Any,
        rules: RuleSet,
        *,
        interval_s: float = 15.0,
        timeout_s: float = 5.0,
        notify: Callable[[list[AlertEvent]], None] | None = None,
    ) -> None:
        self.con = con
        self.writer = writer
        self.rules = rules
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.notify = notify
        self.active: dict[tuple[str, str], Firing] = {}
        self.pending: dict[tuple[str, str], _dt.datetime] = {}
        self.stats = EvaluatorStats(rules={r.name: RuleStats() for r in rules.rules})
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one evaluation at a time (the loop, a test's evaluate())

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    def load(self) -> None:
        """Take the alerts the store says are firing (of rules still in the file) as firing now."""
        with store_cursor(self.con) as cur:
            rows = cur.execute(ACTIVE_SQL).fetchall()
        for rule, key, evidence, summary, at in rows:
            if rule in self.rules.by_name:
                try:
                    doc = json.loads(evidence) if evidence else {}
                except ValueError:
                    doc = {}
                self.active[(rule, key)] = Firing(doc, summary or "", iso(at) or "")

    def start(self) -> None:
        self.load()
        self._thread = threading.Thread(target=self._loop, name="otel-agent-alerts", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop after the evaluation in progress (its queries end by their deadline)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout_s + 10)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.evaluate()
            except Exception as exc:  # the loop outlives any one evaluation
                if self._stop.is_set():
                    return
                log.error("alerts: an evaluation failed: %s", exc)

    # -- one evaluation ----------------------------------------------------------------------------------------------

    def evaluate(self, at: _dt.datetime | None = None) -> list[AlertEvent]:
        """Run every rule once as of ``at`` (default: now, UTC); append and notify the events; return them."""
        with self._lock:
            return self._evaluate(at)

    def _evaluate(self, at: _dt.datetime | None) -> list[AlertEvent]:
        started = time.monotonic()
        deadline = started + self.timeout_s
        now = _dt.datetime.now(_dt.UTC)
        as_of = (at or now).astimezone(_dt.UTC).replace(tzinfo=None)  # the views' times are UTC, without a zone
        events: list[AlertEvent] = []
        # what is firing changes only with what was stored: a failed write leaves it as it was
        active_before, pending_before = dict(self.active), dict(self.pending)
        shared: dict[Any, list[Rule]] = {}
        for rule in self.rules.rules:
            if rule.shared_query is not None:
                shared.setdefault(rule.shared_query, []).append(rule)
        results: dict[str, dict[str, dict[str, Any]] | None] = {}
        for rule in self.rules.rules:
            if rule.name not in results:
                group = shared.get(rule.shared_query, [rule]) if rule.shared_query is not None else [rule]
                results.update(self._run(group, deadline, as_of))
            found = results[rule.name]
            if found is not None:
                # a result cut at MAX_ALERTS_PER_RULE is not the whole truth: nothing of the rule resolves on it
                complete = not self.stats.rules[rule.name].was_cut
                events += self._compare(rule, found, now, as_of, resolve=complete)
        if events:
            try:
                self.writer.run_write(lambda con: insert_events(con, events))
            except BaseException:
                self.active, self.pending = active_before, pending_before
                raise
            for i, e in enumerate(events):
                self.stats.events[e.event] = self.stats.events.get(e.event, 0) + 1
                if i < LOGGED_EVENTS:
                    log.info("alert %s: %s %s — %s", e.event, e.rule, e.alert_key, (e.summary or "")[:200])
            if len(events) > LOGGED_EVENTS:
                log.info("alerts: %d more events this evaluation (otel-agent alerts --history)",
                         len(events) - LOGGED_EVENTS)  # fmt: skip
            if self.notify is not None:
                self.notify(events)
        elapsed = time.monotonic() - started
        self.stats.evaluations += 1
        self.stats.last_seconds = elapsed
        self.stats.last_at = time.time()
        return events

    def _run(
        self, group: list[Rule], deadline: float, as_of: _dt.datetime
    ) -> dict[str, dict[str, dict[str, Any]] | None]:
        """rule name → (key → row of its query as of ``as_of``), for one rule or a group sharing one query (their
        rows told apart by ``state``); None for a rule whose query failed or ran out of time (nothing changes)."""
        rule = group[0]
        every = [self.stats.rules.setdefault(r.name, RuleStats()) for r in group]
        began = time.monotonic()
        if rule.kind == "sql":
            sql, params = rule.sql, []
        else:
            values = {**rule.params, "now": as_of}
            if len(group) > 1:
                values["states"] = [r.params["states"][0] for r in group]
            sql, params = positional(rule.sql, values)
        try:
            result = run_query(
                self.con, sql, params, max_rows=MAX_ALERTS_PER_RULE * len(group), max_bytes=None,
                timeout_s=self.timeout_s, deadline=deadline,
            )  # fmt: skip
        except OtelAgentError as exc:
            message = " ".join(str(exc).split())[:300]
            for r, stats in zip(group, every, strict=True):
                stats.evaluations += 1
                stats.failures += 1
                if message != stats.last_error:
                    log.warning("alerts: rule %s was not evaluated: %s", r.name, message)
                stats.last_error = message
                stats.last_seconds = time.monotonic() - began
            return dict.fromkeys((r.name for r in group), None)
        out: dict[str, dict[str, dict[str, Any]] | None] = {}
        for r, stats in zip(group, every, strict=True):
            stats.evaluations += 1
            stats.last_seconds = time.monotonic() - began
            out[r.name] = self._rows(r, stats, result, len(group) > 1)
        return out

    def _rows(self, rule: Rule, stats: RuleStats, result: Any, shared: bool) -> dict[str, dict[str, Any]] | None:
        if stats.last_error is not None:
            log.info("alerts: rule %s is evaluated again", rule.name)
        stats.last_error = None
        if "key" not in result.columns:
            stats.failures += 1
            stats.last_error = "the query has no key column"
            log.warning("alerts: rule %s: its query returns no column named key", rule.name)
            return None
        docs = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        if shared:
            docs = [d for d in docs if d.get("state") == rule.params["states"][0]]
        cut = result.truncated and (not shared or len(docs) >= MAX_ALERTS_PER_RULE)
        if cut and not stats.was_cut:  # it starts being cut
            log.warning("alerts: rule %s: more than %d alerts; the first are kept", rule.name, MAX_ALERTS_PER_RULE)
        stats.cut += int(cut)
        stats.was_cut = result.truncated  # a shared result cut anywhere resolves nothing of its rules
        found: dict[str, dict[str, Any]] = {}
        for doc in docs[:MAX_ALERTS_PER_RULE]:
            found.setdefault(_key(doc.get("key")), doc)
        return found

    def _compare(
        self, rule: Rule, found: dict[str, dict[str, Any]], now: _dt.datetime, as_of: _dt.datetime, *,
        resolve: bool = True,
    ) -> list[AlertEvent]:  # fmt: skip
        events: list[AlertEvent] = []
        at = iso(now) or ""
        for key, row in found.items():
            ident = (rule.name, key)
            summary = str(row.get("summary") or f"{rule.name}: {key}")[:MAX_SUMMARY]
            if ident in self.active:
                self.active[ident].evidence = row
                self.active[ident].summary = summary
                continue
            if rule.for_s > 0:
                first = self.pending.setdefault(ident, as_of)  # held since the evaluation that first saw it
                if (as_of - first).total_seconds() < rule.for_s:
                    continue
            self.pending.pop(ident, None)
            events.append(self._event(rule, key, "firing", summary, row, at))
            self.active[ident] = Firing(row, summary, at)
        for ident in [i for i in self.pending if i[0] == rule.name and i[1] not in found]:
            del self.pending[ident]
        for ident in [i for i in self.active if resolve and i[0] == rule.name and i[1] not in found]:
            gone = self.active.pop(ident)
            events.append(self._event(rule, ident[1], "resolved", gone.summary, gone.evidence, at))
        return events

    @staticmethod
    def _event(rule: Rule, key: str, what: str, summary: str, row: dict[str, Any], at: str) -> AlertEvent:
        return AlertEvent(
            new_event_id(), rule.name, key, what, rule_kind=rule.kind, severity=rule.severity, summary=summary,
            evidence=evidence_json(row), event_at=at,
        )  # fmt: skip

    # -- silences ----------------------------------------------------------------------------------------------------

    def silenced(self) -> set[tuple[str, str]]:
        """(rule, key) pairs silenced now (key ``*``: every key of the rule)."""
        with store_cursor(self.con) as cur:
            return {(r, k) for r, k, _ in cur.execute(SILENCES_SQL).fetchall()}

    def firing_by_rule(self) -> dict[str, int]:
        counts = {r.name: 0 for r in self.rules.rules}
        for rule, _key in list(self.active):
            counts[rule] = counts.get(rule, 0) + 1
        return counts
