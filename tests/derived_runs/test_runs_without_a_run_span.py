"""A run without a run-level span (third-party spans whose root is a call, not an agent or a workflow) is described
by its roots (docs/views-runs.md, Runs): it is in error when a root is, its ``error_type`` is the first root's in
error (never a child's), and its ``agent_name`` falls back to the first agent name on any of its spans. Written
for the mutants of ``080_runs.sql`` that the rest of tests/derived_runs let live: ``root_error_type`` read from
the spans with a parent, ``any_agent`` read from the spans without an agent name (issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from tests.derived_runs.runs_support import query, write_store


def chat(model: str, **extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model, **extra}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **extra}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three traces, each a run whose root is a chat call (no run-level span):

    - ``both fail``: the root fails with ``RootFailure``, its tool child with ``ChildFailure``;
    - ``child fails``: the root succeeds, its tool child fails with ``ChildOnly``;
    - ``agent below``: nothing fails; the only agent name is on the root's child call.
    """
    out = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(out))
    tracer = provider.get_tracer("hand-built")

    def failed(span: Any, error_type: str) -> None:
        span.set_attribute("error.type", error_type)
        span.set_status(Status(StatusCode.ERROR))

    with tracer.start_as_current_span("both fail", attributes=chat("gpt-4o")) as root:
        with tracer.start_as_current_span("execute_tool search", attributes=tool("search")) as child:
            failed(child, "ChildFailure")
        failed(root, "RootFailure")
    with (
        tracer.start_as_current_span("child fails", attributes=chat("gpt-4o")),
        tracer.start_as_current_span("execute_tool fetch", attributes=tool("fetch")) as child,
    ):
        failed(child, "ChildOnly")
    helper_call = chat("gpt-4o-mini", **{"gen_ai.agent.name": "helper"})
    with (
        tracer.start_as_current_span("agent below", attributes=chat("gpt-4o")),
        tracer.start_as_current_span("chat gpt-4o-mini", attributes=helper_call),
    ):
        pass
    provider.shutdown()
    return write_store(tmp_path_factory.mktemp("rootless") / "s.duckdb", list(out.get_finished_spans()))


def run(store: Path, workflow: str) -> dict[str, Any]:
    (found,) = query(
        store,
        "SELECT status, error_type, agent_name, run_span_id IS NULL AS rootless FROM runs WHERE workflow_name = ?",
        [workflow],
    )
    assert found["rootless"], found  # described by its root: no run-level span
    return found


def test_the_error_type_is_the_failed_roots_not_its_childs(store: Path) -> None:
    assert run(store, "both fail") == {
        "status": "error",
        "error_type": "RootFailure",
        "agent_name": None,
        "rootless": True,
    }


def test_a_failed_child_under_a_root_that_succeeded_gives_no_error_type(store: Path) -> None:
    assert run(store, "child fails") == {"status": "ok", "error_type": None, "agent_name": None, "rootless": True}


def test_the_agent_name_falls_back_to_a_child_calls(store: Path) -> None:
    assert run(store, "agent below") == {"status": "ok", "error_type": None, "agent_name": "helper", "rootless": True}
