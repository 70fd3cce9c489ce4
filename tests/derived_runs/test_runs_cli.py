"""otel-agent runs / run / metrics, against a closed store file and through a live receiver."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from otel_agent.main import cli
from otel_agent.server.receiver import Receiver
from tests.derived_runs.scenario import FAILING_RUN_ID, RUN_ID, demo_spans
from tests.derived_runs.test_runs_delivery import post


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_runs_lists_recent_runs(demo_store: Path) -> None:
    runs = json.loads(invoke("runs", "--db", str(demo_store), "--format", "json"))
    assert [r["run_id"] for r in runs] == [FAILING_RUN_ID, RUN_ID]  # most recent first
    research = runs[1]
    assert {k: research[k] for k in ("workflow", "status", "steps", "calls", "tools", "tokens_in", "tokens_out",
                                     "unpriced", "blocks", "errors", "budget_exceeded")} == {
        "workflow": "deep_research", "status": "ok", "steps": 4, "calls": 5, "tools": 2, "tokens_in": 1510,
        "tokens_out": 305, "unpriced": 2, "blocks": 1, "errors": 2, "budget_exceeded": True,
    }  # fmt: skip
    assert research["cost_usd"] == 0.01
    only_errors = json.loads(invoke("runs", "--db", str(demo_store), "--format", "json", "--status", "error"))
    assert [r["run_id"] for r in only_errors] == [FAILING_RUN_ID]
    table = invoke("runs", "--db", str(demo_store), "--limit", "1")
    assert FAILING_RUN_ID in table
    assert RUN_ID not in table
    assert "(1 row)" in table


def test_run_shows_the_tree(demo_store: Path) -> None:
    out = invoke("run", RUN_ID, "--db", str(demo_store))
    lines = out.splitlines()
    assert lines[0].startswith(f"run {RUN_ID}  deep_research  ok")
    assert "budget model calls ≤ 4, cost ≤ $1.000000  EXCEEDED: model_calls" in out
    assert "cost $0.010000 (+2 unpriced calls)" in out
    tree = lines[lines.index("") + 1 :]
    assert tree[0].startswith("run deep_research")
    # shape: steps under the run, the skill under its step, its call and guard under the skill
    expected_prefixes = [
        ("├─ step plan", None),
        ("│  └─ skill research-planner@1.0.0", None),
        ("│     ├─ call openai/gpt-4o (gpt-4o-2024-08-06)", "tokens 1000→200  $0.004000 (price_table)"),
        ("│     └─ guard input.length: passed", None),
        ("├─ step search", None),
        ("│  ├─ call exa/search", "$0.002000 (span)  retries 1  fallback tavily/search → exa/search"),
        ("│  ├─ tool web_search (tavily)", "$0.001000  retries 1"),
        ("│  └─ guard budget.cost: passed", None),
        ("├─ step verify", None),
        ("│  ├─ call anthropic/claude-3-5-sonnet-20241022", "tokens 500→100  $0.003000 (price_table)"),
        ("│  ├─ verify citation_coverage: failed score 0.6 (coverage_insufficient)", None),
        ("│  └─ guard output.citation_required: blocked (uncited_claim)", None),
        ("└─ step synthesize", None),
        ("   ├─ call openai/house-model-7", "unpriced (no price for this model)"),
        ("   ├─ call openai/gpt-4o-mini", "unpriced (no token usage reported)  ERROR ProviderTimeoutError"),
        ("   ├─ tool python", "ERROR ValueError: bad code"),
        (f"   ├─ artifact {RUN_ID}_art v1", f"{RUN_ID}_v1"),
        ("   └─ handoff delegated → fact_checker", None),
    ]
    assert len(tree) == 1 + len(expected_prefixes)
    for line, (prefix, contains) in zip(tree[1:], expected_prefixes, strict=True):
        assert line.startswith(prefix), line
        if contains:
            assert contains in line, line
    assert "record artifact" not in out  # records hidden by default
    assert f"   ├─ record artifact  {RUN_ID}_art" in invoke("run", RUN_ID, "--db", str(demo_store), "--all")

    failing = invoke("run", FAILING_RUN_ID, "--db", str(demo_store))
    assert "error (RuntimeError)" in failing.splitlines()[0]
    assert "└─ step answer" in failing
    assert "ERROR RuntimeError" in failing


def test_metrics(demo_store: Path) -> None:
    rows = json.loads(invoke("metrics", RUN_ID, "--db", str(demo_store), "--format", "json"))
    values = {r["metric"]: r["value"] for r in rows}
    assert values["usage.provider_calls"] == 5
    assert values["reliability.guard_blocks"] == 1
    assert values["cost.total_usd"] == pytest.approx(0.01)
    assert {r["unit"] for r in rows} == {"USD", "{count}", "{token}", "ms", "1"}  # "1": the quality ratios


def test_unknown_run_is_an_error(demo_store: Path) -> None:
    for command in ("run", "metrics"):
        result = CliRunner().invoke(cli, [command, "run_nope", "--db", str(demo_store)])
        assert result.exit_code == 2
        assert "no run 'run_nope'" in result.output


def test_through_a_live_receiver(make_receiver: Callable[..., Receiver]) -> None:
    live = make_receiver()
    post(live, demo_spans())
    db = live.config.db
    # the receiver holds the file: the commands find it through <db>.receiver.json, or are told --receiver
    for args in (("--db", db), ("--receiver", live.http_address)):
        runs = json.loads(invoke("runs", *args, "--format", "json"))
        assert {r["run_id"] for r in runs} == {RUN_ID, FAILING_RUN_ID}
        assert next(r for r in runs if r["run_id"] == RUN_ID)["tokens_in"] == 1510
        out = invoke("run", RUN_ID, *args)
        assert "call openai/gpt-4o (gpt-4o-2024-08-06)" in out
        assert "EXCEEDED: model_calls" in out
        metrics = json.loads(invoke("metrics", RUN_ID, *args, "--format", "json"))
        assert {r["metric"]: r["value"] for r in metrics}["usage.tokens.output"] == 305
    live.stop()
    assert "call openai/gpt-4o" in invoke("run", RUN_ID, "--db", db)
