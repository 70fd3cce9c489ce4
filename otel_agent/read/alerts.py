"""Alerts, the read layer's reads and writes: the current alerts and their history from ``alert_events`` (an
append-only product table, store/schema/100_alerts.sql), webhook delivery attempts from ``alert_deliveries``, and
people's decisions about an alert — acknowledge, silence, unsilence — appended the way reviews are
(``read.reviews``): through the receiver holding the store (its ``/v1/alerts/decision``, the ``review`` role,
the INSERT on its writer thread), else into the file itself.

An alert is one (rule, key). It is *firing* from its latest ``firing`` event until a later ``resolved`` one;
*acknowledged* when someone acknowledged it after it last fired; *silenced* while a silence of its key (or of
every key of its rule, ``*``) runs: the receiver sends no notification for it meanwhile.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import asdict, dataclass
from typing import Any

from otel_agent.errors import InvalidPayloadError
from otel_agent.read.reviews import checked_text
from otel_agent.read.source import Source, Table

EVENTS = ("firing", "resolved", "acknowledged", "silenced", "unsilenced")
DECISIONS = ("acknowledged", "silenced", "unsilenced")
STATES = ("firing", "acknowledged", "silenced", "resolved")
"""What ``otel-agent alerts --state`` filters on: firing (any firing alert), acknowledged / silenced (firing
ones a person acknowledged / silenced), resolved."""
MAX_EVIDENCE_TEXT = 4096
"""Longest text value kept in an alert's evidence (a rule's row may carry telemetry: bounded where it is stored)."""
MAX_EVIDENCE_ITEMS = 200
"""Most items of one list or map kept in an alert's evidence."""
ALL_KEYS = "*"

EVENT_COLUMNS = (
    "event_id", "rule", "alert_key", "event", "rule_kind", "severity", "summary", "evidence", "event_at", "actor",
    "principal", "silenced_until",
)  # fmt: skip


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def new_event_id() -> str:
    """Time-ordered: ``alev_<ns since epoch, hex><8 random hex>``."""
    return f"alev_{time.time_ns():016x}{os.urandom(4).hex()}"


def iso(ts: _dt.datetime | None) -> str | None:
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.UTC)
    return ts.astimezone(_dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _json_value(value: Any) -> Any:
    if isinstance(value, (_dt.datetime, _dt.date)):
        return iso(value) if isinstance(value, _dt.datetime) else value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, dict):
        return {str(k)[:MAX_EVIDENCE_TEXT]: _json_value(v) for k, v in list(value.items())[:MAX_EVIDENCE_ITEMS]}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value[:MAX_EVIDENCE_ITEMS]]
    if isinstance(value, str):
        return value if len(value) <= MAX_EVIDENCE_TEXT else value[:MAX_EVIDENCE_TEXT] + "…"
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return str(value)


def evidence_json(row: dict[str, Any]) -> str:
    """A rule's row as the JSON object stored with its event (times as ISO text, anything else as text)."""
    return json.dumps(_json_value(row), ensure_ascii=False, default=str)


@dataclass
class AlertEvent:
    """One row of ``alert_events`` (``event_at`` / ``silenced_until`` as ISO text, ``evidence`` as JSON text)."""

    event_id: str
    rule: str
    alert_key: str
    event: str
    rule_kind: str | None = None
    severity: str | None = None
    summary: str | None = None
    evidence: str | None = None
    event_at: str = ""
    actor: str | None = None
    principal: str | None = None
    silenced_until: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def document(self) -> dict[str, Any]:
        """The event as a webhook's JSON document (evidence parsed)."""
        doc = self.as_dict()
        doc["evidence"] = json.loads(self.evidence) if self.evidence else None
        return doc


def _ts(text: str | None) -> _dt.datetime | None:
    return None if text is None else _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def insert_events(con: Any, events: list[AlertEvent]) -> list[AlertEvent]:
    """Append ``events`` to ``alert_events`` (inside the caller's transaction: the writer's ``run_write``)."""
    if events:
        con.executemany(
            f"INSERT INTO alert_events ({', '.join(EVENT_COLUMNS)}) VALUES ({', '.join('?' * len(EVENT_COLUMNS))})",
            [
                [e.event_id, e.rule, e.alert_key, e.event, e.rule_kind, e.severity, e.summary, e.evidence,
                 _ts(e.event_at), e.actor, e.principal, _ts(e.silenced_until)]
                for e in events
            ],
        )  # fmt: skip
    return events


@dataclass
class DeliveryAttempt:
    """One row of ``alert_deliveries``."""

    event_id: str
    attempt: int
    url: str
    attempted_at: _dt.datetime
    status_code: int | None
    error: str | None
    duration_ms: float
    delivered: bool


def insert_attempts(con: Any, attempts: list[DeliveryAttempt]) -> None:
    """Append webhook delivery attempts to ``alert_deliveries``."""
    con.executemany(
        "INSERT INTO alert_deliveries (event_id, attempt, url, attempted_at, status_code, error, duration_ms,"
        " delivered) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [[a.event_id, a.attempt, a.url, a.attempted_at, a.status_code, a.error, a.duration_ms, a.delivered]
         for a in attempts],
    )  # fmt: skip


# --- reads ----------------------------------------------------------------------------------------------------------

# Per (rule, key): the lifecycle (latest of firing / resolved), the acknowledgement of its current firing, and
# the silence in force (of its key or of every key of its rule: the latest silenced / unsilenced event of each).
ALERTS_SQL = """
WITH life AS (
    SELECT rule, alert_key,
           arg_max(event, (event_at, event_id)) AS last_event,
           arg_max(rule_kind, (event_at, event_id)) AS rule_kind,
           arg_max(severity, (event_at, event_id)) FILTER (WHERE event = 'firing') AS severity,
           arg_max(summary, (event_at, event_id)) FILTER (WHERE event = 'firing') AS summary,
           arg_max(evidence, (event_at, event_id)) FILTER (WHERE event = 'firing') AS evidence,
           max(event_at) FILTER (WHERE event = 'firing') AS fired_at,
           max(event_at) FILTER (WHERE event = 'resolved') AS resolved_at,
           count(*) FILTER (WHERE event = 'firing') AS times_fired
    FROM alert_events WHERE event IN ('firing', 'resolved')
    GROUP BY rule, alert_key
),
acks AS (
    SELECT rule, alert_key, arg_max(actor, (event_at, event_id)) AS acknowledged_by, max(event_at) AS acknowledged_at
    FROM alert_events WHERE event = 'acknowledged' GROUP BY rule, alert_key
),
silences AS (
    SELECT rule, alert_key, arg_max(event, (event_at, event_id)) AS last_event,
           arg_max(silenced_until, (event_at, event_id)) AS until, arg_max(actor, (event_at, event_id)) AS silenced_by
    FROM alert_events WHERE event IN ('silenced', 'unsilenced') GROUP BY rule, alert_key
),
alerts AS (
    SELECT CASE WHEN l.last_event = 'firing' THEN 'firing' ELSE 'resolved' END AS state,
           l.severity, l.rule, l.alert_key, l.fired_at,
           CASE WHEN a.acknowledged_at >= l.fired_at THEN a.acknowledged_by END AS acknowledged_by,
           (SELECT max(s.until) FROM silences s
            WHERE s.rule = l.rule AND s.alert_key IN (l.alert_key, '*') AND s.last_event = 'silenced'
              AND s.until > now()) AS silenced_until,
           CASE WHEN l.last_event = 'resolved' THEN l.resolved_at END AS resolved_at,
           l.summary,
           CASE WHEN a.acknowledged_at >= l.fired_at THEN a.acknowledged_at END AS acknowledged_at,
           l.rule_kind, l.times_fired, l.evidence
    FROM life l LEFT JOIN acks a USING (rule, alert_key)
)
SELECT * FROM alerts
WHERE CASE $state::VARCHAR
          WHEN 'firing' THEN state = 'firing'
          WHEN 'resolved' THEN state = 'resolved'
          WHEN 'acknowledged' THEN state = 'firing' AND acknowledged_at IS NOT NULL
          WHEN 'silenced' THEN state = 'firing' AND silenced_until IS NOT NULL
          ELSE true END
  AND ($rule::VARCHAR IS NULL OR rule = $rule::VARCHAR)
  AND ($key::VARCHAR IS NULL OR alert_key = $key::VARCHAR)
ORDER BY state = 'resolved', CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,
         coalesce(resolved_at, fired_at) DESC, rule, alert_key
LIMIT $limit
"""

HISTORY_SQL = """
SELECT event_at, event, rule, alert_key, severity, summary, actor, silenced_until, event_id
FROM alert_events
WHERE ($rule::VARCHAR IS NULL OR rule = $rule::VARCHAR) AND ($key::VARCHAR IS NULL OR alert_key = $key::VARCHAR)
ORDER BY event_at DESC, event_id DESC
LIMIT $limit
"""

DELIVERIES_SQL = """
SELECT d.attempted_at, d.event_id, e.rule, e.alert_key, e.event, d.attempt, d.delivered, d.status_code, d.error,
       d.duration_ms, d.url
FROM alert_deliveries d LEFT JOIN alert_events e USING (event_id)
ORDER BY d.attempted_at DESC, d.event_id, d.attempt DESC
LIMIT $limit
"""

_HAS_TABLES = "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'alert_events' AND schema_name = 'main'"


def _has_alerts(src: Source) -> bool:
    """False for a store written before schema version 6 (read-only: it has no alert tables)."""
    row = src.one(_HAS_TABLES)
    return bool(row and row["n"])


def _empty(columns: str) -> Table:
    names = columns.split()
    return Table(names, ["VARCHAR"] * len(names), [])


def alerts_table(
    src: Source, *, state: str | None = None, rule: str | None = None, key: str | None = None,
    limit: int = 1_000_000, max_rows: int = 10_000,
) -> Table:  # fmt: skip
    """Every alert (rule, key) with its state, firing first (critical first, newest first), then resolved."""
    if state is not None and state not in STATES:
        raise InvalidPayloadError(f"an alert state is one of {', '.join(STATES)}, not {state[:40]!r}")
    if not _has_alerts(src):
        return _empty("state severity rule alert_key fired_at acknowledged_by silenced_until resolved_at summary")
    return src.table(ALERTS_SQL, {"state": state, "rule": rule, "key": key, "limit": limit}, max_rows=max_rows)


def history_table(
    src: Source, *, rule: str | None = None, key: str | None = None, limit: int = 1000, max_rows: int = 10_000
) -> Table:
    """The events, newest first."""
    if not _has_alerts(src):
        return _empty("event_at event rule alert_key severity summary actor silenced_until event_id")
    return src.table(HISTORY_SQL, {"rule": rule, "key": key, "limit": limit}, max_rows=max_rows)


def deliveries_table(src: Source, *, limit: int = 1000, max_rows: int = 10_000) -> Table:
    """Webhook delivery attempts, newest first."""
    if not _has_alerts(src):
        return _empty("attempted_at event_id rule alert_key event attempt delivered status_code error duration_ms url")
    return src.table(DELIVERIES_SQL, {"limit": limit}, max_rows=max_rows)


@dataclass
class AlertsPage:
    """The console's alerts page: alerts firing, recently resolved, and the latest events."""

    firing: list[dict[str, Any]]
    resolved: list[dict[str, Any]]
    history: list[dict[str, Any]]


def alerts_page(
    src: Source, *, resolved: int = 50, events: int = 100, rule: str | None = None, key: str | None = None
) -> AlertsPage:
    """The page, or the part of it about one rule and/or one key (the runs and receipts pages' marks link here)."""
    firing = alerts_table(src, state="firing", rule=rule, key=key).dicts()
    done = alerts_table(src, state="resolved", rule=rule, key=key, limit=resolved).dicts()
    return AlertsPage(firing, done, history_table(src, rule=rule, key=key, limit=events).dicts())


RUN_KINDS = ("run_abandoned", "budget_exceeded", "cost", "sql")
"""The kinds whose key can be a run id: ``run_abandoned``, ``budget_exceeded`` and ``cost`` with ``per = "run"``
key each alert by ``run_id``; an SQL rule's key is whatever its query says. (``cost`` per hour / window,
``error_rate`` and ``guard_blocks`` key a group — ``all``, a service, a provider/model — never a run.)"""
RECEIPT_KINDS = ("receipt", "sql")
"""The kinds whose key can be a handoff operation id: ``receipt`` (each operation in the state), and SQL rules."""


@dataclass
class FiringMark:
    """One firing alert as a row of the runs or receipts page marks it."""

    rule: str
    alert_key: str
    severity: str | None
    summary: str | None


def firing_by_key(src: Source, kinds: tuple[str, ...] | None = None) -> dict[str, list[FiringMark]]:
    """alert key → the alerts firing for it (most severe first), of the rule kinds ``kinds`` (all when None).
    A page marks its rows whose id is a key here (``RUN_KINDS`` for runs, ``RECEIPT_KINDS`` for receipts); a key
    that is no row's id marks nothing. Reads ``alert_events`` only (small: one row per lifecycle change)."""
    out: dict[str, list[FiringMark]] = {}
    for row in alerts_table(src, state="firing").dicts():
        if kinds is None or row.get("rule_kind") in kinds:
            mark = FiringMark(row["rule"], row["alert_key"], row.get("severity"), row.get("summary"))
            out.setdefault(row["alert_key"], []).append(mark)
    return out


# --- decisions (acknowledge, silence) -------------------------------------------------------------------------------


def prepare_decision(
    con: Any,
    decision: str,
    rule: str,
    key: str,
    actor: str,
    reason: str | None = None,
    *,
    until: _dt.datetime | None = None,
    principal: str | None = None,
    now: _dt.datetime | None = None,
) -> AlertEvent:
    """Validate a person's decision about an alert (a read: any cursor). An acknowledgement names an alert that
    fired; a silence names a rule that fired (key ``*``: all its keys) and needs ``until`` in the future."""
    if decision not in DECISIONS:
        raise InvalidPayloadError(f"an alert decision is one of {', '.join(DECISIONS)}, not {decision[:40]!r}")
    rule_name = checked_text(rule, "rule", required=True)
    alert_key = checked_text(key, "key", required=True)
    who = checked_text(actor, "actor (--by)", required=True)
    why = checked_text(reason, "reason", required=False)
    at = now or _now()
    if decision == "silenced":
        if until is None:
            raise InvalidPayloadError("a silence needs an end (--for DURATION)")
        if until.tzinfo is None:
            until = until.replace(tzinfo=_dt.UTC)
        if until <= at:
            raise InvalidPayloadError("a silence must end in the future")
    where = "rule = ?" + ("" if alert_key == ALL_KEYS else " AND alert_key = ?")
    params = [rule_name] + ([] if alert_key == ALL_KEYS else [alert_key])
    found = con.execute(f"SELECT count(*) FROM alert_events WHERE event = 'firing' AND {where}", params).fetchall()
    if not found[0][0]:
        what = f"rule {rule_name!r}" if alert_key == ALL_KEYS else f"alert {rule_name!r} key {alert_key!r}"
        from otel_agent.errors import NotFoundError

        raise NotFoundError(f"no {what} has fired: nothing was written")
    if decision == "acknowledged" and alert_key == ALL_KEYS:
        raise InvalidPayloadError("acknowledge one alert (a key, not '*')")
    return AlertEvent(
        new_event_id(), rule_name, alert_key, decision, summary=why, event_at=iso(at) or "", actor=who,  # type: ignore[arg-type]
        principal=principal, silenced_until=iso(until) if decision == "silenced" else None,
    )  # fmt: skip


def decide_where(
    where: Any,
    decision: str,
    rule: str,
    key: str,
    actor: str,
    reason: str | None,
    until: _dt.datetime | None = None,
) -> dict[str, Any]:
    """Record a decision where the data is (``read.stores.Where``): through the receiver named or holding the
    file (as its authenticated principal), else into the file itself. Returns the stored event and ``via``."""
    from otel_agent.read.stores import receiver_of

    url = receiver_of(where)
    if url:
        from otel_agent.query.api_client import ReceiverClient

        body = {"decision": decision, "rule": rule, "key": key, "actor": actor, "reason": reason,
                "until": iso(until)}  # fmt: skip
        doc = ReceiverClient(url, where.token, timeout_s=60).alert_decision(body)
        return {**doc, "via": url}
    from otel_agent.read.reviews import _write_file

    db = where.files[0]

    def write(con: Any) -> AlertEvent:
        return insert_events(con, [prepare_decision(con, decision, rule, key, actor, reason, until=until)])[0]

    event = _write_file(db, write)
    return {**event.as_dict(), "via": db}
