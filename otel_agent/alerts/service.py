"""Alerts in a receiver, assembled: the rules (checked at start), the evaluator thread, the webhook sender, the
metrics registry, and their two HTTP routes — ``GET /metrics`` and ``POST /v1/alerts/decision`` (acknowledge,
silence, unsilence; the ``review`` role; the INSERT on the writer's thread, as reviews are written).

The receiver (``server.receiver``) builds one ``AlertService`` whatever its settings: without ``--alert-rules``
there is no evaluator and no webhook, and ``/metrics`` still serves the receipt, run and writer figures.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Callable
from typing import Any

import duckdb
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from otel_agent.alerts.evaluator import Evaluator
from otel_agent.alerts.metrics import CONTENT_TYPE, Metrics, ReceiverCollector, StateFigures
from otel_agent.alerts.rules import AlertRulesError, RuleSet, load_rules, parse_duration
from otel_agent.alerts.webhook import WebhookSender
from otel_agent.errors import InvalidPayloadError, OtelAgentError, status_for
from otel_agent.read.alerts import ALL_KEYS, AlertEvent, insert_attempts, insert_events, prepare_decision
from otel_agent.store.database import store_cursor

log = logging.getLogger(__name__)

MAX_DECISION_BYTES = 64 * 1024


class AlertService:
    """Alerts of one receiver. ``con``: the store's connection (read cursors are made from it); ``writer``: the
    writer (``run_write``); ``auth``: the authenticator; ``health``: the ``/healthz`` figures as a dict."""

    def __init__(
        self,
        con: Any,
        writer: Any,
        auth: Any,
        health: Callable[[], dict[str, Any]],
        *,
        rules_file: str | None = None,
        interval_s: float = 15.0,
        timeout_s: float = 5.0,
        rules: RuleSet | None = None,
    ) -> None:
        self.con = con
        self.writer = writer
        self.auth = auth
        self.rules = rules if rules is not None else (load_rules(rules_file) if rules_file else RuleSet())
        self.webhook: WebhookSender | None = None
        if self.rules.webhook is not None:
            self.webhook = WebhookSender(self.rules.webhook, record=self._record_attempts)
        self.figures = StateFigures(con, max_age_s=interval_s, timeout_s=timeout_s)
        self.evaluator: Evaluator | None = None
        if self.rules.rules:
            self.evaluator = Evaluator(
                con, writer, self.rules, interval_s=interval_s, timeout_s=timeout_s, notify=self._notify
            )
        # The receipt and run counts are refreshed by a scrape that finds them older than the interval (not by
        # the evaluator: its time budget is the rules', and nobody may be scraping).
        collector = ReceiverCollector(self.figures, health, self.evaluator, self.webhook)
        self.metrics = Metrics(collector)
        self.routes: list[BaseRoute] = [
            Route("/metrics", self._metrics_endpoint, methods=["GET"]),
            Route("/v1/alerts/decision", self._decision_endpoint, methods=["POST"]),
        ]

    def check(self) -> None:
        """Bind every SQL-kind rule against the store (``DESCRIBE``: nothing runs) and require its ``key`` column;
        ``AlertRulesError`` (one line) otherwise."""
        with store_cursor(self.con) as cur:
            for rule in self.rules.rules:
                if rule.kind != "sql":
                    continue
                try:
                    columns = [r[0] for r in cur.execute("DESCRIBE " + rule.sql).fetchall()]
                except duckdb.Error as exc:
                    first = " ".join(str(exc).split())[:200]
                    raise AlertRulesError(f"{self.rules.source}: rule {rule.name}: query: {first}") from None
                if "key" not in columns:
                    raise AlertRulesError(
                        f"{self.rules.source}: rule {rule.name}: query: no column named key (columns: "
                        f"{', '.join(columns)[:200]})"
                    )

    def start(self) -> None:
        if self.webhook is not None:
            self.webhook.start()
        if self.evaluator is not None:
            self.evaluator.start()
            log.info("alerts: %d rule(s) from %s, every %g s", len(self.rules.rules), self.rules.source,
                     self.evaluator.interval_s)  # fmt: skip

    def close(self) -> None:
        """Stop evaluating and delivering (before the writer closes: both write through it)."""
        if self.evaluator is not None:
            self.evaluator.close()
        if self.webhook is not None:
            self.webhook.close()

    # -- the evaluator's callbacks -----------------------------------------------------------------------------------

    def _notify(self, events: list[AlertEvent]) -> None:
        if self.webhook is None or not events:
            return
        try:
            silenced = self.evaluator.silenced() if self.evaluator is not None else set()
        except Exception as exc:  # a failed lookup does not stop a notification
            log.warning("alerts: silences not read: %s", exc)
            silenced = set()
        told = [e for e in events if (e.rule, e.alert_key) not in silenced and (e.rule, ALL_KEYS) not in silenced]
        self.webhook.enqueue(told)

    def _record_attempts(self, attempts: list[Any]) -> None:
        self.writer.run_write(lambda con: insert_attempts(con, attempts))

    # -- decisions ---------------------------------------------------------------------------------------------------

    def decide(
        self, decision: str, rule: str, key: str, actor: str, reason: str | None, until: _dt.datetime | None,
        principal: str | None,
    ) -> AlertEvent:  # fmt: skip
        """Validate on a read cursor, append on the writer's thread."""
        with store_cursor(self.con) as cur:
            event = prepare_decision(cur, decision, rule, key, actor, reason, until=until, principal=principal)
        self.writer.run_write(lambda con: insert_events(con, [event]))
        return event

    # -- HTTP --------------------------------------------------------------------------------------------------------

    async def _metrics_endpoint(self, request: Request) -> Response:
        try:
            self.auth.authenticate(request.headers.get("authorization"), None)
        except OtelAgentError as exc:
            return _error(exc)
        body = await run_in_threadpool(self.metrics.render)
        return Response(body, media_type=CONTENT_TYPE)

    async def _decision_endpoint(self, request: Request) -> Response:
        try:
            who = self.auth.authenticate(request.headers.get("authorization"), "review")
            raw = await request.body()
            if len(raw) > MAX_DECISION_BYTES:
                raise InvalidPayloadError(f"a decision is at most {MAX_DECISION_BYTES} bytes")
            doc = _decision_doc(raw)
            until = doc.get("until")
            if isinstance(until, str) and until:
                try:
                    until = _dt.datetime.fromisoformat(until.replace("Z", "+00:00"))
                except ValueError:
                    raise InvalidPayloadError(f"until: an ISO time, not {until[:40]!r}") from None
            elif doc.get("for"):
                try:
                    until = _dt.datetime.now(_dt.UTC) + _dt.timedelta(seconds=parse_duration(doc["for"], "for"))
                except ValueError as exc:
                    raise InvalidPayloadError(str(exc)) from None
            else:
                until = None
            principal = who.name  # None without a tokens file
            event = await run_in_threadpool(
                self.decide, str(doc.get("decision") or ""), str(doc.get("rule") or ""), str(doc.get("key") or ""),
                str(doc.get("actor") or ""), doc.get("reason") if isinstance(doc.get("reason"), str) else None,
                until, principal,
            )  # fmt: skip
        except OtelAgentError as exc:
            return _error(exc)
        return JSONResponse(event.as_dict())


def _decision_doc(raw: bytes) -> dict[str, Any]:
    import json

    try:
        doc = json.loads(raw)
    except ValueError:
        raise InvalidPayloadError("the body is not JSON") from None
    if not isinstance(doc, dict):
        raise InvalidPayloadError("the body is a JSON object: decision, rule, key, actor, reason, until | for")
    return doc


def _error(exc: OtelAgentError) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=status_for(exc).http_status)
