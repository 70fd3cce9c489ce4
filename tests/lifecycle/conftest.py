"""The Collector fixtures of tests/collector, for the shared-archive test behind a real Collector; a PostgreSQL
server of the tests' own for the Iceberg catalog in Postgres."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.collector.conftest import collector_bin, make_collector
from tests.lifecycle.postgres_server import Postgres, binaries, postgres_server
from tests.tools import missing_tool

__all__ = ["collector_bin", "make_collector", "postgres"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One server per test process (each test makes its own database); skipped only without the binaries
    (outside CI: tests/tools.py)."""
    bindir = binaries()
    if bindir is None:
        missing_tool(
            "postgresql",
            "PostgreSQL server binaries absent (/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql",
        )
    with postgres_server(bindir) as server:
        yield server
