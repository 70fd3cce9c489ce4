"""Fixtures: an SDK TracerProvider with an in-memory exporter, bound to the test's context only.

The provider is bound with ``use_tracer_provider`` (a contextvar), never set as OpenTelemetry's global
provider, so nothing leaks between tests or into other test packages.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from instrument_support import Spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent.instrument import config, use_tracer_provider


@pytest.fixture(autouse=True)
def _clean_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(config.CAPTURE_CONTENT_ENV, raising=False)
    config.configure()
    yield
    config.configure()


@pytest.fixture
def spans() -> Iterator[Spans]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with use_tracer_provider(provider):
        yield Spans(exporter, provider)
    provider.shutdown()
