"""Issue 15 item 6: a badcase keeps the raw model output by default (bounded, a cut marked), a redaction rule
drops it at storage; ordinary content capture stays opt-in."""

from __future__ import annotations

import json
from pathlib import Path

import otel_agent.instrument as oi
from otel_agent import DuckDBSpanExporter
from tests.seeds.support import recording, rows


def record() -> None:
    with oi.flow_run("game_change", run_id="run_gc"), oi.step("quality_review", iteration=1):
        with oi.provider_call("openai", "gpt-4o") as call:
            assert call.record_output([{"role": "assistant", "parts": [{"type": "text", "content": "{bad"}]}]) is False
        oi.badcase("json_parse", error_type="JSONDecodeError", raw_model_output='{"decision": "rep', badcase_id="b1")
        oi.badcase("json_parse", error_type="JSONDecodeError", raw_model_output="y" * 100_000, badcase_id="b2")


def store(path: Path, rules: Path | None = None) -> Path:
    with recording() as spans:
        record()
    exporter = DuckDBSpanExporter(path, redaction_rules=rules)
    try:
        exporter.export(spans)
    finally:
        exporter.shutdown()
    return path


SQL = "SELECT badcase_id, raw_model_output, raw_model_output_truncated, raw_model_output_bytes FROM badcases ORDER BY 1"


def test_badcases_keep_the_raw_output_bounded(tmp_path: Path) -> None:
    db = store(tmp_path / "s.duckdb")
    b1, b2 = rows(db, SQL)
    assert b1 == {"badcase_id": "b1", "raw_model_output": '{"decision": "rep', "raw_model_output_truncated": False,
                  "raw_model_output_bytes": 17}  # fmt: skip
    assert b2["raw_model_output"] == "y" * 65536
    assert b2["raw_model_output_truncated"] is True
    assert b2["raw_model_output_bytes"] == 100_000
    # ordinary content capture stays opt-in: the call's output messages were not recorded
    attrs = rows(db, "SELECT attributes FROM spans WHERE name = 'chat gpt-4o'")[0]["attributes"]
    assert "gen_ai.output.messages" not in json.loads(attrs)


def test_a_redaction_rule_drops_it(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": r"^otel_agent\.badcase\.raw_model_output$", "action": "drop"}]))
    db = store(tmp_path / "s.duckdb", rules)
    assert [(r["badcase_id"], r["raw_model_output"]) for r in rows(db, SQL)] == [("b1", None), ("b2", None)]
