"""``GET /metrics``: the receiver in Prometheus' text format (the official ``prometheus-client`` library), so an
operator's Prometheus, Alertmanager and Grafana can alert and graph without any code of ours.

What it exposes: the alerts firing by rule and the evaluator's and webhook's figures; handoff receipts by state
and runs by status (one query, run by a scrape that finds the last counts older than ``max_age_s``, bounded by a
deadline; concurrent scrapes share it); and the figures of ``/healthz``
(admission, group commits, checkpoints, the maintained state's lag). A scrape reads numbers already held, or
runs those two queries on a read cursor beside the writer: it never waits for the writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from otel_agent.errors import OtelAgentError
from otel_agent.query.readonly import run_query
from otel_agent.read.receipts import STATES as RECEIPT_STATES

log = logging.getLogger(__name__)

PREFIX = "otel_agent"
RUN_STATUSES = ("ok", "error", "running", "abandoned")
"""Statuses always exposed (0 when none), so a PromQL expression over one of them has a series to read."""
STATE_FIGURES_SQL = """
SELECT 'receipt' AS what, state AS name, count(*) AS n FROM receipt_state GROUP BY state
UNION ALL
SELECT 'run', coalesce(status, '(none)'), count(*) FROM runs GROUP BY status
"""
CONTENT_TYPE = CONTENT_TYPE_LATEST


class StateFigures:
    """Receipts by state and runs by status, as of the last refresh."""

    def __init__(self, con: Any, max_age_s: float, timeout_s: float) -> None:
        self.con = con
        self.max_age_s = max_age_s
        self.timeout_s = timeout_s
        self.receipts: dict[str, int] = {}
        self.runs: dict[str, int] = {}
        self.refreshed_at: float | None = None
        self.failures = 0
        self.last_seconds = 0.0
        self._lock = threading.Lock()

    def refresh(self, timeout_s: float | None = None) -> None:
        """Count again (one query, bounded by ``timeout_s``); a failure keeps the previous figures."""
        with self._lock:
            self._refresh(timeout_s)

    def fresh(self) -> None:
        """Refresh when older than ``max_age_s`` (a scrape; another scrape meanwhile waits and reads its counts)."""
        with self._lock:
            if self.refreshed_at is None or time.monotonic() - self.refreshed_at >= self.max_age_s:
                self._refresh(None)

    def _refresh(self, timeout_s: float | None) -> None:
        began = time.monotonic()
        self.refreshed_at = began  # a failure too: the next try is max_age_s later, not at every scrape
        try:
            result = run_query(self.con, STATE_FIGURES_SQL, timeout_s=max(0.1, timeout_s or self.timeout_s))
        except OtelAgentError as exc:
            self.failures += 1
            log.warning("metrics: receipt and run figures not refreshed: %s", " ".join(str(exc).split())[:200])
            return
        finally:
            self.last_seconds = time.monotonic() - began
        receipts: dict[str, int] = {}
        runs: dict[str, int] = {}
        for what, name, n in result.rows:
            (receipts if what == "receipt" else runs)[str(name)] = int(n)
        self.receipts, self.runs = receipts, runs


def _gauge(name: str, doc: str, value: float | None, labels: dict[str, str] | None = None) -> GaugeMetricFamily:
    family = GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=list(labels or {}))
    if value is not None:
        family.add_metric(list((labels or {}).values()), value)
    return family


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    family = CounterMetricFamily(f"{PREFIX}_{name}", doc)
    family.add_metric([], value)
    return family


class ReceiverCollector:
    """A prometheus-client collector over the receiver's parts, read at each scrape."""

    def __init__(
        self,
        figures: StateFigures,
        health: Callable[[], dict[str, Any]],
        evaluator: Any = None,
        webhook: Any = None,
        refresh_on_scrape: bool = True,
    ) -> None:
        self.figures = figures
        self.health = health
        self.evaluator = evaluator
        self.webhook = webhook
        self.refresh_on_scrape = refresh_on_scrape

    def collect(self) -> Iterator[Metric]:
        if self.refresh_on_scrape:
            self.figures.fresh()
        yield from self._alerts()
        yield from self._states()
        yield from self._writer()

    def _alerts(self) -> Iterator[Metric]:
        firing = GaugeMetricFamily(
            f"{PREFIX}_alerts_firing", "Alerts firing now, by rule (0: the rule fires for no key).", labels=["rule",
            "severity"],
        )  # fmt: skip
        ev = self.evaluator
        if ev is not None:
            counts = ev.firing_by_rule()
            for rule in ev.rules.rules:
                firing.add_metric([rule.name, rule.severity], counts.get(rule.name, 0))
        yield firing
        if ev is None:
            return
        yield _counter("alert_evaluations", "Evaluations of the alert rules.", ev.stats.evaluations)
        yield _gauge(
            "alert_evaluation_seconds", "Duration of the last evaluation of every rule.", ev.stats.last_seconds
        )
        failures = CounterMetricFamily(
            f"{PREFIX}_alert_rule_failures", "Evaluations of a rule that failed or ran out of time.", labels=["rule"]
        )
        for name, stats in ev.stats.rules.items():
            failures.add_metric([name], stats.failures)
        yield failures
        events = CounterMetricFamily(f"{PREFIX}_alert_events", "Alert events appended, by event.", labels=["event"])
        for name, n in sorted(ev.stats.events.items()):
            events.add_metric([name], n)
        yield events
        hook = self.webhook
        if hook is not None:
            deliveries = CounterMetricFamily(
                f"{PREFIX}_webhook_deliveries", "Webhook deliveries by outcome.", labels=["outcome"]
            )
            s = hook.stats
            for outcome, n in (("delivered", s.delivered), ("given_up", s.given_up), ("dropped", s.dropped)):
                deliveries.add_metric([outcome], n)
            yield deliveries
            yield _counter("webhook_attempts", "Webhook POSTs attempted.", s.attempts)
            yield _counter("webhook_failed_attempts", "Webhook POSTs that were not a 2xx answer.", s.failed_attempts)
            yield _gauge("webhook_pending", "Events waiting for a webhook attempt.", hook.pending)

    def _states(self) -> Iterator[Metric]:
        f = self.figures
        receipts = GaugeMetricFamily(
            f"{PREFIX}_receipts", "Handoff operations by receipt state (default windows).", labels=["state"]
        )
        for state in (*RECEIPT_STATES, *sorted(set(f.receipts) - set(RECEIPT_STATES))):
            receipts.add_metric([state], f.receipts.get(state, 0))
        yield receipts
        runs = GaugeMetricFamily(f"{PREFIX}_runs", "Runs by status.", labels=["status"])
        for status in (*RUN_STATUSES, *sorted(set(f.runs) - set(RUN_STATUSES))):
            runs.add_metric([status], f.runs.get(status, 0))
        yield runs
        yield _gauge("state_figures_seconds", "Duration of the last count of receipts and runs.", f.last_seconds)
        yield _counter("state_figures_failures", "Counts of receipts and runs that failed.", f.failures)

    def _writer(self) -> Iterator[Metric]:
        h = self.health()
        gauges = {
            "queue_depth": "Jobs queued for the writer thread.",
            "inflight_bytes": "Request bytes admitted and not yet answered.",
            "max_inflight_bytes": "Bound on admitted request bytes (beyond it: 429).",
        }
        for name, doc in gauges.items():
            yield _gauge(f"writer_{name}", doc, float(h.get(name) or 0))
        counters = {
            "commits": "Group commits.",
            "items_committed": "Spans, log records and metric points committed.",
            "commit_seconds": "Time spent committing.",
            "refused": "Requests refused for want of room (429).",
            "failed_group_commits": "Group commits that failed.",
            "checkpoints": "Checkpoints run after a commit.",
            "idle_checkpoints": "Checkpoints run while idle.",
            "store_reattaches": "Re-attaches of the store (block cache emptied).",
        }
        for name, doc in counters.items():
            yield _counter(f"writer_{name}", doc, float(h.get(name) or 0))
        stages = CounterMetricFamily(f"{PREFIX}_writer_commit_stage_seconds", "Commit time by stage.", labels=["stage"])
        for stage, seconds in sorted((h.get("commit_stage_seconds") or {}).items()):
            stages.add_metric([stage], float(seconds))
        yield stages
        yield _counter(
            "decode_worker_restarts", "Decode worker processes replaced.", float(h.get("decode_worker_restarts") or 0)
        )
        derived = h.get("derived") or {}
        lag = derived.get("lag_s") if isinstance(derived, dict) else None
        yield _gauge("derived_lag_seconds", "How far the maintained runs state is behind the store.",
                     float(lag) if isinstance(lag, (int, float)) else None)  # fmt: skip
        yield _gauge("ready", "1 when the receiver accepts data (/healthz 200).", 0.0 if h.get("unavailable") else 1.0)


class Metrics:
    """The registry ``GET /metrics`` renders."""

    def __init__(self, collector: ReceiverCollector) -> None:
        self.collector = collector
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)  # type: ignore[arg-type]

    def render(self) -> bytes:
        return generate_latest(self.registry)
