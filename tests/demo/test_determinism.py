"""Same records every run: ids and contents equal across runs, processes and modes; the CLI; the store guard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agent.instrument as oi
from otel_agent.demo import content as C
from otel_agent.demo.relay import spans_from_otlp
from otel_agent.demo.runner import DemoError, DemoResult, prepare_store
from tests.demo.store import KIND, query, records

RECORD_IDS = f"""
SELECT DISTINCT service_name, {KIND}, coalesce(
    attributes->>'otel_agent.run.id', '') || '|' || coalesce(attributes->>'otel_agent.step.id', '') || '|' ||
    coalesce(attributes->>'otel_agent.source.id', attributes->>'otel_agent.evidence.id',
             attributes->>'otel_agent.claim.id', attributes->>'otel_agent.citation.id',
             attributes->>'otel_agent.conflict.id', attributes->>'otel_agent.artifact_version.id',
             attributes->>'otel_agent.artifact.id', attributes->>'otel_agent.decision.id',
             attributes->>'otel_agent.badcase.id', attributes->>'otel_agent.repair.id',
             attributes->>'otel_agent.memory_proposal.id',
             attributes->>'otel_agent.skill.invocation_id', attributes->>'otel_agent.context.snapshot_id',
             attributes->>'gen_ai.tool.call.id', attributes->>'otel_agent.receipt.handoff_id', '')
FROM spans ORDER BY ALL
"""


def test_otlp_and_embedded_runs_record_the_same_things(otlp_demo: DemoResult, embedded_demo: DemoResult) -> None:
    assert query(otlp_demo.db, RECORD_IDS) == query(embedded_demo.db, RECORD_IDS)
    recorded = records(otlp_demo.db)
    assert len(recorded) == 96  # 81 + the LLM proxy's record of the v2 writer call + issue 15 items 3, 4, 12: a
    # decision, an authorization, a re-delegation and two recovery transitions + the 9 announcements (pending
    # spans) of the runs and steps that started
    assert len({r[0] for r in recorded}) == 2
    assert recorded == records(embedded_demo.db)
    assert otlp_demo.fact_check_handoff_id == embedded_demo.fact_check_handoff_id
    assert otlp_demo.translate_handoff_id == embedded_demo.translate_handoff_id


def test_a_cli_run_in_a_fresh_process_records_the_same_ids_and_contents(tmp_path: Path, otlp_demo: DemoResult) -> None:
    db = str(tmp_path / "cli.duckdb")
    cli = [sys.executable, "-m", "otel_agent", "demo", "--db", db]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"Run {C.RUN_ID}:" in out
    assert "Spans by otel_agent.record.kind" in out
    assert "Handoff receipts (otel-agent receipts)" in out
    assert f"otel-agent run {C.RUN_ID} --db {db}" in out
    assert f"otel-agent ui --db {db}" in out
    assert query(db, RECORD_IDS) == query(otlp_demo.db, RECORD_IDS)
    assert records(db) == records(otlp_demo.db)

    again = subprocess.run(cli, capture_output=True, text=True, timeout=120)  # the file exists now: refused
    assert again.returncode == 2
    assert "already exists; pass --replace" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1, again.stderr


def test_prepare_store_refuses_an_existing_file_unless_replace(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "x.duckdb"
    prepare_store(str(db), replace=False)  # creates the folder
    db.write_bytes(b"not a store")
    Path(f"{db}.wal").write_bytes(b"")
    with pytest.raises(DemoError, match="already exists"):
        prepare_store(str(db), replace=False)
    prepare_store(str(db), replace=True)
    assert not db.exists()
    assert not Path(f"{db}.wal").exists()


def test_relay_frames_turn_back_into_the_same_otlp() -> None:
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with oi.use_tracer_provider(provider), oi.flow_run("relay", run_id="run_relay") as run:
        delegation = oi.delegate("report", operation_id="op_relay")
        with oi.accept(delegation.carrier, expected_artifact="report") as work:
            work.waiting("approval:x")
            with oi.provider_call("a", "m") as call:
                call.fallback(to_provider="b", reason="down")
            with oi.tool_invocation("t") as tool:
                tool.fail("boom", "it broke")
        run.set_attribute("demo.list", ("x", "y"))
    spans = memory.get_finished_spans()
    payload = encode_spans(spans).SerializeToString()
    assert encode_spans(spans_from_otlp(payload)).SerializeToString() == payload
