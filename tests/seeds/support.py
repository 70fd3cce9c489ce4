"""Seed-fidelity tests (issue 15): record with the public helpers under a real SDK provider, store through the
embedded exporter (DuckDBSpanExporter), read back from the views and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent.instrument as oi
from otel_agent.cli.main import cli
from tests.derived_runs.runs_support import query, write_store


@contextmanager
def recording() -> Iterator[list[ReadableSpan]]:
    """Spans the helpers emit inside the block (bound to this context only); the list fills on exit."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    out: list[ReadableSpan] = []
    with oi.use_tracer_provider(provider):
        yield out
    provider.shutdown()
    out.extend(exporter.get_finished_spans())


def store_of(path: Path, record: Callable[[], Any]) -> Path:
    """A store file holding what ``record`` emitted through the helpers."""
    with recording() as spans:
        record()
    return write_store(path, spans)


def store_fixture(record: Callable[[], Any]) -> Any:
    """A module-scoped fixture giving the store of ``record``, written once for the module's tests (which only
    read it: views, macros and read-only CLI commands)."""

    @pytest.fixture(scope="module")
    def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return store_of(tmp_path_factory.mktemp("seed") / "s.duckdb", record)

    return db


def rows(path: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    return query(path, sql, params)


def run_cli(path: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--db", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output
