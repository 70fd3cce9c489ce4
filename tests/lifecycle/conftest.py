"""The Collector fixtures of tests/collector, for the shared-archive test behind a real Collector."""

from tests.collector.conftest import collector_bin, make_collector

__all__ = ["collector_bin", "make_collector"]
