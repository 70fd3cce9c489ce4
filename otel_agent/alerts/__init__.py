"""Alerts: rules over the public views evaluated by the receiver, their lifecycle in ``alert_events``, the webhook
that is told, and ``/metrics`` for Prometheus (docs/alerts.md)."""
