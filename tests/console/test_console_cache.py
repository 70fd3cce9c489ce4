"""The console's result cache (console/store.py ResultCache): a page's results are reused while the store is
unchanged or for a second, never once a review has been written, whichever path wrote it."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import duckdb
import requests

from otel_agent.console.store import READER_NICE, ConsoleStore, ResultCache
from tests.console.conftest import Live

CLAIM = "claim_demo_v2_graph"
AUTH = {"Authorization": "Bearer bob-query"}


def test_rules() -> None:
    cache = ResultCache(entries=2, fresh_s=0.5)
    now = time.monotonic()
    cache.put("a", 1, (0, 0), now, "A")
    assert cache.get("a", 1, (0, 0)) == (True, "A")  # nothing committed since
    assert cache.get("a", 2, (0, 0)) == (True, "A")  # spans committed, but read less than fresh_s ago
    assert cache.get("a", 1, (1, 0)) == (False, None)  # a review was written: not reused, and dropped
    assert cache.get("a", 1, (0, 0)) == (False, None)
    cache.put("a", 1, (0, 0), now - 5, "A")
    assert cache.get("a", 1, (0, 0)) == (True, "A")  # old, but the store is unchanged
    assert cache.get("a", 2, (0, 0)) == (False, None)  # old and spans committed since
    for key in ("a", "b", "c"):  # at most `entries`, the least recently used dropped first
        cache.put(key, 1, None, now, key.upper())
    assert cache.get("a", 1, None) == (False, None)
    assert cache.get("b", 1, None) == (True, "B")
    assert cache.get("c", 1, None) == (True, "C")


def test_review_written_elsewhere_shows_at_once(live: Live) -> None:
    """A claim page read (and so cached) just before a review arrives through the receiver's review service
    (the path of POST /v1/review and the CLI, not the console's form) shows the review on the next load."""
    url = f"{live.url}/claims/{CLAIM}"
    first = requests.get(url, headers=AUTH, timeout=30)
    assert first.status_code == 200
    assert "cache-test-reviewer" not in first.text
    cache = live.receiver.console.console.store.results
    with cache._lock:
        assert [k for k in cache._data if k == ("claim", CLAIM)]  # the page's results are held for reuse
    live.receiver.review.reviews.submit("claim", CLAIM, "annotate", "cache-test-reviewer", "cache test", None)
    after = requests.get(url, headers=AUTH, timeout=30)
    assert after.status_code == 200
    assert "cache-test-reviewer" in after.text


def _thread_nice() -> int:
    """The calling thread's niceness, as the kernel reports it (/proc/self/task/<tid>/stat, field 19)."""
    stat = Path(f"/proc/self/task/{threading.get_native_id()}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


def test_live_console_reads_at_a_lower_priority_than_ingest(live: Live) -> None:
    """Inside a receiver the page jobs run on threads READER_NICE steps nicer than the receiver's own (ingest
    first when CPU is short); the console of closed files (no ingest) keeps the process's priority."""
    mine = _thread_nice()
    receiver_store = live.receiver.console.console.store
    assert receiver_store.run(lambda q: _thread_nice()) == mine  # run() itself: the caller's thread
    assert asyncio.run(receiver_store.load(lambda q: _thread_nice())) == min(mine + READER_NICE, 19)
    closed = ConsoleStore(duckdb.connect(":memory:"))
    try:
        assert asyncio.run(closed.load(lambda q: _thread_nice())) == mine
    finally:
        closed.close()
