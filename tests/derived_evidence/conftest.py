"""Fixtures: the recorded research scenario, and a fresh store holding it."""

from __future__ import annotations

import pytest

from tests.derived_evidence.scenario import Recorded, record_research
from tests.derived_evidence.support import Store


@pytest.fixture(scope="session")
def research() -> Recorded:
    return record_research()


@pytest.fixture
def store(tmp_path, research) -> Store:
    s = Store(tmp_path / "research.duckdb")
    s.ingest_spans(research.spans)
    yield s
    s.close()
