"""``otel-agent mcp --db FILE`` over stdio, driven by the SDK's own client as an agent would: the tools answer
from the read layer with bounded, escaped data; a scripted session answers "why did my last run fail and what
did it cost" from tool calls alone."""

from __future__ import annotations

from pathlib import Path

from mcp.client import Client

from tests.mcp.conftest import data_of, run, stdio, text_of
from tests.mcp.scenario import CLAIM, FAILED_RUN, HOSTILE, OK_RUN, PRICED_COST

TOOLS = {
    "search_runs", "get_run", "get_span", "find_spans", "claim_lineage", "get_receipts", "get_alerts", "get_health",
    "get_sessions", "describe_views", "query", "approve", "reject", "annotate",
}  # fmt: skip


def test_why_did_my_last_run_fail_and_what_did_it_cost(store: Path) -> None:
    async def session() -> dict:
        async with Client(stdio("--db", str(store))) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == TOOLS
            last = data_of(await client.call_tool("search_runs", {"limit": 1}))["data"]
            assert len(last) == 1
            run_id = last[0]["run_id"]
            detail = data_of(await client.call_tool("get_run", {"run_id": run_id}))["data"]
            origin = detail["errors"][0]
            span = data_of(
                await client.call_tool("get_span", {"trace_id": origin["trace_id"], "span_id": origin["span_id"]})
            )["data"]
            return {"last": last[0], "detail": detail, "origin": origin, "span": span}

    found = run(session)
    # the last run is the failed one, and the answer is in the tool results alone:
    assert found["last"]["run_id"] == FAILED_RUN
    assert found["last"]["status"] == "error"
    summary = found["detail"]["summary"]
    assert summary["status"] == "error"
    assert summary["error_type"] == "ConnectionError"
    # why: the error began in the fetch tool (the origin), and the step and run failed because of it
    origin = found["origin"]
    assert origin["is_error_origin"] is True
    assert origin["category"] == "tool_invocation"
    assert origin["tool_name"] == "fetch"
    assert origin["error_message"] == "ConnectionError: upstream timed out"
    assert [e["is_error_origin"] for e in found["detail"]["errors"]] == [True, False, False]
    # what it cost: the priced call, and the call without a price said as such, never as $0
    assert summary["cost_usd"] == PRICED_COST
    assert summary["unpriced_calls"] == 1
    assert summary["cost"] == "$0.004500 (+1 unpriced call)"
    calls = [n for n in found["detail"]["tree"] if n["kind"] == "call"]
    assert [c["title"] for c in calls] == ["openai/gpt-4o", "openai/house-model-7"]
    assert calls[1]["details"][-1] == "unpriced (no price for this model)"
    assert found["span"]["span"]["name"] == "execute_tool fetch"


def test_filters_tree_budget_lineage_schema_and_resources(store: Path) -> None:
    async def session() -> dict:
        async with Client(stdio("--db", str(store))) as client:
            out = {
                "errors_only": data_of(await client.call_tool("search_runs", {"status": "error"})),
                "ok": data_of(await client.call_tool("search_runs", {"status": "ok", "agent": "helper"})),
                "cheap": data_of(await client.call_tool("search_runs", {"min_cost_usd": 0.001})),
                "small_tree": data_of(await client.call_tool("get_run", {"run_id": FAILED_RUN, "tree_budget": 5})),
                "lineage": data_of(await client.call_tool("claim_lineage", {"claim_id": CLAIM})),
                "views": data_of(await client.call_tool("describe_views", {"view": "runs"})),
                "missing": await client.call_tool("get_run", {"run_id": "no-such-run"}),
                "bad_status": await client.call_tool("search_runs", {"status": "burning"}),
                "resources": [str(r.uri) for r in (await client.list_resources()).resources],
                "doc": await client.read_resource("otel-agent://docs/views-runs"),
            }
            return out

    out = run(session)
    assert [r["run_id"] for r in out["errors_only"]["data"]] == [FAILED_RUN]
    assert [r["run_id"] for r in out["ok"]["data"]] == [OK_RUN]
    assert [r["run_id"] for r in out["cheap"]["data"]] == [FAILED_RUN]
    small = out["small_tree"]
    assert len(small["data"]["tree"]) == 5
    assert small["cut"]
    assert "tree nodes left out" in small["cut"][0]
    kinds = [n["kind"] for n in small["data"]["tree"]]
    assert "tool" in kinds  # the error path is kept first: run → step → tool
    assert [e["title"] for e in small["data"]["tree"] if "ConnectionError" in e["marks"]][-1] == "fetch"
    assert [c["evidence_id"] for c in out["lineage"]["data"]["evidence"]]
    assert any(c.startswith("cost_usd ") for c in out["views"]["data"]["runs"])
    assert out["missing"].is_error
    assert "no run" in text_of(out["missing"])
    assert out["bad_status"].is_error
    assert "status is one of" in text_of(out["bad_status"])
    assert out["resources"] == [
        "otel-agent://docs/views-runs", "otel-agent://docs/views-evidence", "otel-agent://docs/schema"
    ]  # fmt: skip
    assert out["doc"].contents[0].text.startswith("# Derived views I")


def test_telemetry_is_marked_data_escaped_and_bounded(store: Path) -> None:
    async def session() -> list:
        async with Client(stdio("--db", str(store))) as client:
            found = data_of(await client.call_tool("find_spans", {"attribute": "payload"}))["data"]
            span = found[0]
            detail = await client.call_tool("get_span", {"trace_id": span["trace_id"], "span_id": span["span_id"]})
            return [found, detail]

    found, detail = run(session)
    assert len(found) == 1
    text = text_of(detail)
    # one element, closed once: the value's own "</telemetry-data>" and "<system>" are JSON-escaped
    assert text.count("</telemetry-data>") == 1
    assert "<system>" not in text
    assert "\\u003c/telemetry-data\\u003e" in text
    payload = data_of(detail)["data"]["attributes"]["payload"]
    assert payload.startswith(HOSTILE.split("<")[0])
    assert "\\x1b[31m\\n" in payload  # control characters shown, not sent
    assert "\x1b" not in text
    assert payload.endswith("more characters]")  # the 10,000-character value is cut with a marker
    assert len(payload) < 2100
    assert len(text.encode()) <= 48 * 1024 + 100


def test_sql_is_sandboxed_and_reviews_refused_over_files(store: Path) -> None:
    async def session() -> dict:
        async with Client(stdio("--db", str(store))) as client:
            return {
                "rows": data_of(await client.call_tool("query", {"sql": "SELECT run_id FROM runs ORDER BY run_id",
                                                                 "max_rows": 1})),
                "write": await client.call_tool("query", {"sql": "DELETE FROM spans"}),
                "file": await client.call_tool("query", {"sql": "SELECT * FROM read_csv('/etc/passwd')"}),
                "path": await client.call_tool("query", {"sql": "SELECT * FROM duckdb_databases()"}),
                "review": await client.call_tool("approve", {"kind": "claim", "target_id": CLAIM}),
            }  # fmt: skip

    out = run(session)
    assert out["rows"]["data"]["rows"] == [[FAILED_RUN]]
    assert out["rows"]["cut"] == ["the result has more than the row cap of 1 rows"]
    assert out["write"].is_error
    assert "only read statements" in text_of(out["write"])
    assert out["file"].is_error
    assert out["path"].is_error
    assert "reveals file paths" in text_of(out["path"])
    assert out["review"].is_error
    assert "read-only" in text_of(out["review"])
