"""``otel-agent ui --archive``: the read-only console over live ∪ archive, as a real process on loopback.

The store holds two runs written through the SDK exporter: one from three days ago, archived by the receiver's
own lifecycle (archive, verify, delete) so only the archive has it, and one from now, still live. The console
lists and shows the archived run only when given the archive."""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterator

import duckdb
import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agent.lifecycle.archive import Archive
from otel_agent.lifecycle.retention import Lifecycle
from otel_agent.store.database import open_store
from otel_agent.store.maintained import DerivedState
from tests.conftest import serve_ui
from tests.derived_runs.runs_support import write_store
from tests.lifecycle.support import ns


def _run(tracer, run_id: str, name: str, at: dt.datetime, tools: int) -> None:
    """An agent run: an invoke_agent root carrying the run id and ``tools`` tool calls under it."""
    attrs = {"otel_agent.run.id": run_id, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    start = ns(at)
    root = tracer.start_span(f"invoke_agent {name}", attributes=attrs, start_time=start)
    ctx = trace.set_span_in_context(root)
    for i in range(tools):
        tool = tracer.start_span(
            f"execute_tool lookup{i}", context=ctx, start_time=start + (i + 1) * 1_000_000,
            attributes={"otel_agent.run.id": run_id, "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": f"lookup{i}"},
        )  # fmt: skip
        tool.end(end_time=start + (i + 1) * 1_000_000 + 500_000)
    root.end(end_time=start + 1_000_000_000)


@pytest.fixture(scope="module")
def archived_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("archive_console")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("archive-console-test")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    _run(tracer, "run-archived-old", "archivist", now - dt.timedelta(days=3), tools=4)
    _run(tracer, "run-live-new", "newcomer", now, tools=1)
    db, archive_dir = root / "store.duckdb", str(root / "archive")
    write_store(db, exporter.get_finished_spans())

    con = open_store(str(db))  # the receiver's lifecycle, driven by hand: archive, verify, delete
    lifecycle = Lifecycle(con, retention_s=86_400, archive=Archive(archive_dir))
    while lifecycle.plan_once():
        while lifecycle.step(con):
            pass
    while lifecycle.step(con):
        pass
    DerivedState(con).catch_up()  # and, as the receiver's thread does, fold the deletions into the runs
    con.close()
    live = duckdb.connect(str(db), read_only=True)
    assert live.execute("SELECT run_id FROM runs").fetchall() == [("run-live-new",)]  # the old run left the store
    live.close()
    assert Archive(archive_dir).files("spans")
    return str(db), archive_dir


@pytest.fixture(scope="module")
def with_archive(archived_run: tuple[str, str]) -> Iterator[str]:
    db, archive_dir = archived_run
    with serve_ui("--db", db, "--archive", archive_dir) as url:
        yield url


@pytest.fixture(scope="module")
def without_archive(archived_run: tuple[str, str]) -> Iterator[str]:
    with serve_ui("--db", archived_run[0]) as url:
        yield url


def _get(url: str) -> str:
    for _ in range(60):  # the runs list answers "still reading" (and refreshes) until its first copy is in
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200, page.text[:500]
        if "still reading" not in page.text.lower():
            return page.text
        time.sleep(0.25)
    raise AssertionError(f"{url}: still reading after 15 s")


def test_ui_with_archive_lists_and_shows_an_archived_run(with_archive: str) -> None:
    runs = _get(with_archive + "/")
    assert "/runs/run-archived-old" in runs, runs[:2000]
    assert "/runs/run-live-new" in runs
    run = _get(with_archive + "/runs/run-archived-old")
    assert "archivist" in run
    spans = re.search(r'<div class="label">Spans</div><div class="value">([^<]*)</div>', run)
    assert spans, run[:3000]
    assert spans[1].strip() == "5"  # the root and its 4 tool calls, all read from the archive
    assert all(f"lookup{i}" in run for i in range(4))


def test_ui_without_archive_has_only_the_live_run(without_archive: str) -> None:
    runs = _get(without_archive + "/")
    assert "/runs/run-live-new" in runs
    assert "run-archived-old" not in runs
    assert "archivist" not in runs
    run = httpx.get(without_archive + "/runs/run-archived-old", timeout=30)
    assert (run.status_code, "lookup0" in run.text) == (404, False)
