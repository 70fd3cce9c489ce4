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
from otel_agent.main import cli
from tests.derived_runs.runs_support import query, write_store


@contextmanager
def recording_with() -> Iterator[tuple[TracerProvider, list[ReadableSpan]]]:
    """The SDK provider the helpers are bound to inside the block (for a record that also uses a third-party
    tracer of it) and the spans it ended there; the list fills on exit."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    out: list[ReadableSpan] = []
    with oi.use_tracer_provider(provider):
        yield provider, out
    provider.shutdown()
    out.extend(exporter.get_finished_spans())


@contextmanager
def recording() -> Iterator[list[ReadableSpan]]:
    """Spans the helpers emit inside the block (bound to this context only); the list fills on exit."""
    with recording_with() as (_, out):
        yield out


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


def provider_store_fixture(
    record: Callable[[TracerProvider], Any],
    stored: Callable[[list[ReadableSpan]], list[ReadableSpan]] = list,
    name: str = "store",
) -> Any:
    """``store_fixture``'s variant for a ``record(provider)`` that also starts spans of its own on the provider
    (a third-party tracer); the store holds ``stored(spans)`` (e.g. one span twice, a re-delivery). The
    fixture is called ``name``; module-scoped, its tests only read the store (or copy it first)."""

    @pytest.fixture(scope="module", name=name)
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        with recording_with() as (provider, spans):
            record(provider)
        return write_store(tmp_path_factory.mktemp("seed") / "s.duckdb", stored(spans))

    return fixture


def rows(path: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    return query(path, sql, params)


def run_cli(path: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--db", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output
