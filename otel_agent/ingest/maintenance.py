"""Maintenance jobs the writer thread runs between group commits (``ingest.writer``; retention's deletes:
otel_agent/lifecycle/retention.py)."""

from __future__ import annotations

from typing import Any, Protocol

import duckdb

MAINTENANCE_IDLE_S = 0.2
"""How often an idle writer runs its maintenance step."""


class Maintenance(Protocol):
    """Work the writer does between group commits on its connection. ``step`` runs before each wait for work,
    returns True while it has more, and must stay short (it delays the next commit); ``report`` is shown by
    /healthz."""

    def step(self, con: duckdb.DuckDBPyConnection) -> bool:
        """One bounded piece of work on the writer's connection; True while more is waiting."""
        ...

    def report(self) -> dict[str, Any]:
        """What /healthz shows under ``lifecycle``."""
        ...
