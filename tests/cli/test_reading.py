"""The reading commands as a person uses them (issue 11 items 16-18, 20, 23; issue 12 item 6): every one takes
--format and --max-rows, bad values get a clear line, tables fit a terminal while csv/json stay whole, money has
one notation, the run tree speaks in words, and the listing commands read the public views."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from otel_agent.main import cli
from otel_agent.read.review_targets import KIND_ALIASES, decisions_for
from otel_agent.server.receiver import Receiver
from tests.cli.conftest import (
    ARTIFACT_ID,
    CLAIM_ID,
    EVIDENCE_ID,
    EXCERPT,
    RUN_ID,
    TOOL_STATUS_MESSAGE,
    assert_one_line_failure,
    cli_spans,
    invoke,
)
from tests.derived_runs.test_runs_delivery import post

# every reading command, with the arguments it needs on cli_store
READING = {
    "sql": ["SELECT span_id FROM spans"],
    "runs": [],
    "run": [RUN_ID],
    "metrics": [RUN_ID],
    "lineage": [CLAIM_ID],
    "receipts": [],
    "claims": [],
    "artifacts": [],
    "cost": [],
    "health": [],
    "dependencies": [],
    "repairs": [],
    "candidates": [ARTIFACT_ID],
    "manifest": [RUN_ID],
    "alerts": [],
}


def test_every_reading_command_is_listed_here() -> None:
    writing_or_other = {"serve", "demo", "review", "trust", "export", "ui", "mcp"}
    assert set(cli.commands) - writing_or_other == set(READING)


@pytest.mark.parametrize("command", sorted(READING))
def test_every_reading_command_takes_format_and_max_rows(cli_store: Path, command: str) -> None:
    args = [command, *READING[command], "--db", str(cli_store)]
    rows = json.loads(invoke(*args, "--format", "json").stdout)
    assert isinstance(rows, list)
    if command in ("receipts", "alerts"):
        assert rows == []  # no handoffs, no alert rules in this store
        return
    assert rows, command
    table = list(csv.reader(io.StringIO(invoke(*args, "--format", "csv").stdout)))
    assert len(table) == len(rows) + 1
    assert table[0] == list(rows[0])
    capped = json.loads(invoke(*args, "--format", "json", "--max-rows", "1").stdout)
    assert len(capped) == 1
    assert capped[0] == rows[0]
    if len(rows) > 1 and command != "run":
        assert "truncated at --max-rows" in invoke(*args, "--max-rows", "1").stdout


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["runs", "--limit", "-1"], ["--limit", "-1 is not in the range x>=1"]),
        (["runs", "--limit", "0"], ["--limit", "0 is not in the range x>=1"]),
        (["claims", "--max-rows", "0"], ["--max-rows", "x>=1"]),
        (["runs", "--format", "xml"], ["--format", "'xml' is not one of 'table', 'csv', 'json'"]),
        (["receipts", "--at", "yesterday"], ["--at", "'yesterday' does not match the formats"]),
        (["receipts", "--ack-window", "-1"], ["--ack-window", "-1"]),
        (["health", "--since", "soon"], ["--since", "'soon'"]),
        (["health", "--since", "2026-02-01", "--until", "2026-01-01"], ["--until must be after --since"]),
        (["claims", "--status", "true"], ["--status", "'true' is not one of"]),
    ],
)
def test_bad_values_get_a_clear_line(cli_store: Path, args: list[str], fragments: list[str]) -> None:
    ran = invoke(*args, "--db", str(cli_store), code=2)
    line = assert_one_line_failure(ran, *fragments)
    assert "SELECT" not in line
    assert "Binder" not in line
    assert "Usage:" not in ran.stderr


@pytest.mark.parametrize("command", ["runs", "claims", "lineage", "run"])
def test_a_missing_store_is_one_line(tmp_path: Path, command: str) -> None:
    args = [command, *READING[command], "--db", str(tmp_path / "absent.duckdb")]
    assert_one_line_failure(invoke(*args, code=2), "no DuckDB file at", "absent.duckdb")


def test_unknown_ids_are_one_line(cli_store: Path) -> None:
    assert_one_line_failure(invoke("run", "run_nope", "--db", str(cli_store), code=2), "no run 'run_nope'")
    assert_one_line_failure(invoke("lineage", "nope", "--db", str(cli_store), code=2), "no claim with id 'nope'")


def test_sql_errors_are_one_line(cli_store: Path) -> None:
    ran = invoke("sql", "SELECT nope FROM spans", "--db", str(cli_store), code=2)
    assert_one_line_failure(ran, "nope")


def test_table_cuts_and_escapes_text_but_csv_and_json_keep_it_whole(cli_store: Path) -> None:
    table = invoke("lineage", CLAIM_ID, "--db", str(cli_store)).stdout
    assert "\x1b" not in table
    assert "\\x1b[31m" in table
    [row] = [line for line in table.splitlines() if line.startswith(CLAIM_ID)]
    assert "…" in row
    assert "THE-END" not in row
    cells = re.split(r"\s{2,}", row)
    assert max(len(c) for c in cells) <= 60
    [doc] = json.loads(invoke("lineage", CLAIM_ID, "--db", str(cli_store), "--format", "json").stdout)
    assert doc["excerpt"] == EXCERPT
    assert doc["evidence_id"] == EVIDENCE_ID
    rows = list(
        csv.DictReader(io.StringIO(invoke("lineage", CLAIM_ID, "--db", str(cli_store), "--format", "csv").stdout))
    )
    assert rows[0]["excerpt"] == EXCERPT


def test_cut_width_follows_the_terminal(cli_store: Path) -> None:
    def widest(columns: str) -> int:
        out = invoke("lineage", CLAIM_ID, "--db", str(cli_store), env={"COLUMNS": columns}).stdout
        [row] = [line for line in out.splitlines() if line.startswith(CLAIM_ID)]
        return max(len(c) for c in re.split(r"\s{2,}", row))

    assert widest("60") <= 30 < widest("200") <= 60  # half the terminal, at most 60


def test_money_has_one_notation(cli_store: Path) -> None:
    db = str(cli_store)
    for out in (
        invoke("cost", "--db", db).stdout,
        invoke("runs", "--db", db).stdout,
        invoke("run", RUN_ID, "--db", db).stdout,
    ):
        assert "$0.000075" in out
        assert "e-05" not in out
    for command in ("cost", "runs"):
        text = invoke(command, "--db", db, "--format", "csv").stdout
        assert "0.000075" in text
        assert "e-05" not in text
    metrics = invoke("sql", "SELECT 7.5e-05::DOUBLE AS cost_usd, 0.00045::DOUBLE AS other_usd", "--db", db).stdout
    assert "$0.000075" in metrics
    assert "$0.000450" in metrics


def test_numbers_are_right_aligned(cli_store: Path) -> None:
    out = invoke("sql", "SELECT 'a' AS name, 5 AS n UNION ALL SELECT 'b', 12345 ORDER BY name", "--db", str(cli_store))
    header, _rule, first, second = out.stdout.splitlines()[:4]
    end = len(header)
    assert first.endswith("5")
    assert second.endswith("12345")
    assert len(first) == len(second) == end
    assert header.endswith(" n")


def test_the_run_tree_speaks_in_words(cli_store: Path) -> None:
    out = invoke("run", RUN_ID, "--db", str(cli_store)).stdout
    assert "?" not in out
    [tool] = [line for line in out.splitlines() if "tool fetch" in line]
    assert f"ERROR: {TOOL_STATUS_MESSAGE}" in tool
    assert "_OTHER" not in tool
    assert "call openai/gpt-4o-mini" in out
    assert "$0.000075 (span)" in out
    assert f"artifact {ARTIFACT_ID} v1  artv_cli_1" in out


def test_run_all_prints_record_ids(cli_store: Path) -> None:
    out = invoke("run", RUN_ID, "--db", str(cli_store), "--all").stdout
    for kind, record_id in (("source", "src_cli"), ("citation", "cit_cli_1"), ("artifact", ARTIFACT_ID)):
        assert f"record {kind}  {record_id}" in out, (kind, out)
    # evidence and claims are drawn with their details, with --all as without (issue 15 item 10)
    assert f"evidence {EVIDENCE_ID}  (high)" in out
    assert f"claim {CLAIM_ID}  supported" in out


def test_run_as_rows(cli_store: Path) -> None:
    rows = json.loads(invoke("run", RUN_ID, "--db", str(cli_store), "--format", "json").stdout)
    assert [(r["depth"], r["category"]) for r in rows][:3] == [(0, "flow_run"), (1, "step"), (2, "provider_call")]
    [tool] = [r for r in rows if r["category"] == "tool_invocation"]
    # ERROR status with a message and no error.type / exception event: the message is the error type (issue 14)
    assert tool["status_message"] == TOOL_STATUS_MESSAGE
    assert tool["error_type"] == TOOL_STATUS_MESSAGE
    every = json.loads(invoke("run", RUN_ID, "--db", str(cli_store), "--format", "json", "--all").stdout)
    assert {r["record_id"] for r in every} >= {"src_cli", EVIDENCE_ID, CLAIM_ID, "cit_cli_1"}


def test_listing_commands_read_the_views(cli_store: Path) -> None:
    db = str(cli_store)
    [claim] = json.loads(invoke("claims", "--db", db, "--format", "json").stdout)
    assert (claim["claim_id"], claim["status"], claim["valid_citations"]) == (CLAIM_ID, "supported", 1)
    assert json.loads(invoke("claims", "--db", db, "--format", "json", "--status", "rejected").stdout) == []
    assert "no run 'other'" in invoke("claims", "--db", db, "--format", "json", "--run", "other", code=2).stderr
    [artifact] = json.loads(invoke("artifacts", "--db", db, "--format", "json").stdout)
    assert (artifact["artifact_id"], artifact["versions"], artifact["latest_version_id"]) == (
        ARTIFACT_ID,
        1,
        "artv_cli_1",
    )
    cost = json.loads(invoke("cost", "--db", db, "--format", "json", "--run", RUN_ID).stdout)
    # a tool with no reported cost: unknown, NULL (issue 14), not 0
    assert {(r["item_type"], r["cost_usd"]) for r in cost} == {("provider_call", 0.000075), ("tool_invocation", None)}
    [provider] = json.loads(invoke("health", "--db", db, "--format", "json").stdout)
    assert (provider["provider"], provider["model"], provider["calls"]) == ("openai", "gpt-4o-mini", 1)
    [tool] = json.loads(invoke("health", "--of", "tools", "--db", db, "--format", "json").stdout)
    assert (tool["tool_name"], tool["errors"]) == ("fetch", 1)
    assert json.loads(invoke("health", "--of", "skills", "--db", db, "--format", "json").stdout) == []
    later = invoke("health", "--db", db, "--format", "json", "--since", "2200-01-01").stdout
    assert json.loads(later) == []


def test_listing_through_a_live_receiver(make_receiver: Callable[..., Receiver]) -> None:
    live = make_receiver()
    post(live, cli_spans())
    for args in (("--db", live.config.db), ("--receiver", live.http_address)):
        [claim] = json.loads(invoke("claims", *args, "--format", "json").stdout)
        assert claim["claim_id"] == CLAIM_ID
        rows = json.loads(invoke("run", RUN_ID, *args, "--format", "json").stdout)
        assert rows[0]["category"] == "flow_run"
        assert "ERROR: " + TOOL_STATUS_MESSAGE in invoke("run", RUN_ID, *args).stdout


# --- review: the usage offers exactly what the ReviewService accepts ---------------------------------------


def test_review_usage_lists_only_accepted_kinds() -> None:
    for verb in ("approve", "reject", "annotate", "acknowledge", "resolve"):
        usage = invoke("review", verb, "--help").stdout.split("Options:")[0]
        offered = set(re.search(r"\{([^}]*)\}", usage.replace("\n", "").replace(" ", "")).group(1).split("|"))
        accepted = {alias for alias, kind in KIND_ALIASES.items() if verb in decisions_for(kind)}
        assert offered == accepted, verb


@pytest.mark.parametrize(
    ("verb", "kind"), [("approve", "conflict"), ("reject", "conflict"), ("acknowledge", "claim"), ("resolve", "memory")]
)
def test_review_refuses_what_the_usage_does_not_offer(cli_store: Path, verb: str, kind: str) -> None:
    ran = invoke("review", verb, kind, "x", "--reviewer", "alice", "--db", str(cli_store), code=2)
    assert_one_line_failure(ran, f"'{kind}' is not")


def test_review_accepts_what_the_usage_offers(tmp_path: Path) -> None:
    """annotate is accepted for a conflict by the parser; the store then says the id is unknown (one line)."""
    from tests.derived_runs.runs_support import write_store

    db = write_store(tmp_path / "r.duckdb", cli_spans())
    ran = invoke(
        "review", "annotate", "conflict", "cf_nope", "--reviewer", "a", "--reason", "r", "--db", str(db), code=2
    )
    assert_one_line_failure(ran, "cf_nope")
    stored = json.loads(
        invoke("review", "approve", "claim", CLAIM_ID, "--reviewer", "alice", "--db", str(db), "--json").stdout
    )
    assert (stored["target_kind"], stored["target_id"], stored["decision"]) == ("claim", CLAIM_ID, "approve")


def test_db_help_of_the_writing_commands_says_the_file_is_written() -> None:
    for args in (("review", "approve"), ("trust",)):
        text = " ".join(invoke(*args, "--help").stdout.split())
        assert "--db FILE DuckDB file to write into" in text, args
    assert "DuckDB file to read" in " ".join(invoke("runs", "--help").stdout.split())


def test_a_bare_group_prints_its_help_and_an_unknown_command_one_line() -> None:
    ran = invoke("review", code=2)
    assert ran.stderr.startswith("Usage: ")
    assert "acknowledge" in ran.stderr
    assert_one_line_failure(invoke("nope", code=2), "No such command 'nope'")
