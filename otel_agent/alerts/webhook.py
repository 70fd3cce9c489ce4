"""Webhook delivery: each alert event POSTed as JSON, signed, retried with backoff, every attempt recorded.

The evaluator hands events over with ``enqueue``, which never waits: a bounded queue (past it an event is dropped,
counted and logged), and one delivery thread of its own. Ingest never waits for a webhook: a receiver that is
down, slow or answering 500 costs this thread's time only (bench/alerts_webhook.py measures it).

Each POST carries the event's JSON document and ``X-Otel-Agent-Signature: sha256=<hex>``, the HMAC-SHA256 of the
exact body bytes under the configured secret (the body, hence the signature, is the same on every attempt of an
event; ``event_id`` lets the receiving side drop a repeat). A 2xx answer delivers it; anything else (refused,
timed out, another status) is retried after ``backoff · 2^(attempt-1)`` seconds (at most ``max_backoff``), up to
``max_attempts``. Attempts wait in a heap by due time, so an event being retried never holds up the next one.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import heapq
import hmac
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import requests

from otel_agent.alerts.rules import Webhook
from otel_agent.read.alerts import AlertEvent, DeliveryAttempt

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Otel-Agent-Signature"
EVENT_HEADER = "X-Otel-Agent-Event"
ATTEMPT_HEADER = "X-Otel-Agent-Attempt"
DOCUMENT_VERSION = 1


def sign(secret: bytes, body: bytes) -> str:
    """The signature header's value for ``body``: ``sha256=<hex HMAC-SHA256>``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(secret: bytes, body: bytes, header: str | None) -> bool:
    """Whether ``header`` is the signature of ``body`` (constant-time): what the receiving side runs."""
    return bool(header) and hmac.compare_digest(sign(secret, body), header or "")


def document(event: AlertEvent) -> bytes:
    """The POST body of an event."""
    doc = {"version": DOCUMENT_VERSION, "source": "otel-agent", **event.document()}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True).encode()


@dataclass(order=True)
class _Pending:
    due: float
    seq: int
    event_id: str = field(compare=False)
    body: bytes = field(compare=False)
    event: str = field(compare=False)
    attempt: int = field(compare=False, default=0)


@dataclass
class WebhookStats:
    delivered: int = 0
    given_up: int = 0
    attempts: int = 0
    failed_attempts: int = 0
    dropped: int = 0


class WebhookSender:
    """Delivers events to ``hook`` on a thread of its own; ``record(attempts)`` stores each attempt (the writer's
    ``run_write``; a failure to record is logged, never retried)."""

    def __init__(self, hook: Webhook, record: Callable[[list[DeliveryAttempt]], None] | None = None) -> None:
        self.hook = hook
        self.record = record
        self.stats = WebhookStats()
        self._heap: list[_Pending] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._session = requests.Session()
        self._thread = threading.Thread(target=self._loop, name="otel-agent-webhook", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def pending(self) -> int:
        return len(self._heap)

    def enqueue(self, events: list[AlertEvent]) -> None:
        """Queue ``events`` for delivery, without waiting; beyond the queue's bound an event is dropped."""
        with self._cond:
            for e in events:
                if len(self._heap) >= self.hook.queue_size:
                    self.stats.dropped += 1
                    log.warning("alerts webhook: queue full (%d): event %s dropped", self.hook.queue_size, e.event_id)
                    continue
                heapq.heappush(
                    self._heap, _Pending(time.monotonic(), next(self._seq), e.event_id, document(e), e.event)
                )
            self._cond.notify()

    def close(self, grace_s: float = 2.0) -> None:
        """Stop: the attempt in progress ends by its timeout; what is still queued is not delivered (logged)."""
        with self._cond:
            self._closed = True
            left = len(self._heap)
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=self.hook.timeout_s + grace_s)
        if left:
            log.warning("alerts webhook: %d event(s) not delivered at stop", left)
        self._session.close()

    def _next(self) -> _Pending | None:
        with self._cond:
            while not self._closed:
                if self._heap:
                    wait = self._heap[0].due - time.monotonic()
                    if wait <= 0:
                        return heapq.heappop(self._heap)
                    self._cond.wait(wait)
                else:
                    self._cond.wait()
            return None

    def _loop(self) -> None:
        while (item := self._next()) is not None:
            try:
                self._attempt(item)
            except Exception as exc:  # the thread outlives any one delivery
                log.error("alerts webhook: delivery of %s failed: %s", item.event_id, exc)

    def _attempt(self, item: _Pending) -> None:
        item.attempt += 1
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(self.hook.secret, item.body),
            EVENT_HEADER: item.event,
            ATTEMPT_HEADER: str(item.attempt),
            "User-Agent": "otel-agent-alerts",
        }
        at = _dt.datetime.now(_dt.UTC)
        began = time.monotonic()
        status: int | None = None
        error: str | None = None
        try:
            reply = self._session.post(self.hook.url, data=item.body, headers=headers, timeout=self.hook.timeout_s)
            status = reply.status_code
            reply.close()
            if not 200 <= status < 300:
                error = f"HTTP {status}"
        except requests.RequestException as exc:
            error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        delivered = error is None
        duration_ms = (time.monotonic() - began) * 1000
        self.stats.attempts += 1
        if delivered:
            self.stats.delivered += 1
        else:
            self.stats.failed_attempts += 1
        attempt = DeliveryAttempt(item.event_id, item.attempt, self.hook.url, at, status, error, duration_ms, delivered)
        if self.record is not None:
            try:
                self.record([attempt])
            except Exception as exc:  # the store is closing, or the writer refused: the delivery stands
                log.warning("alerts webhook: attempt %d of %s not recorded: %s", item.attempt, item.event_id, exc)
        if delivered:
            return
        if item.attempt >= self.hook.max_attempts:
            self.stats.given_up += 1
            log.warning("alerts webhook: %s not delivered after %d attempts (%s)", item.event_id, item.attempt, error)
            return
        delay = min(self.hook.backoff_s * 2 ** (item.attempt - 1), self.hook.max_backoff_s)
        with self._cond:
            item.due = time.monotonic() + delay
            item.seq = next(self._seq)
            heapq.heappush(self._heap, item)
            self._cond.notify()
