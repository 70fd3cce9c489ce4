"""``/mcp`` on a receiver's HTTP endpoint, driven by the SDK's own client over streamable HTTP: the tokens and
roles of ``POST /v1/query`` (refused without a token, or with a token lacking the query role; the review tools
need the review role), the same tools and data as over stdio, and a review written through the receiver's
writer."""

from __future__ import annotations

import httpx
import pytest
from mcp.client import Client

from otel_agent.server.receiver import Receiver
from otel_agent.store.database import store_cursor
from tests.mcp.conftest import data_of, http_client, run, text_of
from tests.mcp.scenario import CLAIM, FAILED_RUN

INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}  # fmt: skip
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("token", "status", "says"),
    [(None, 401, "missing bearer token"), ("nope", 401, "unknown bearer token"), ("mcp-ingest", 403, "query")],
)
def test_refused_without_the_query_role(live: Receiver, token: str | None, status: int, says: str) -> None:
    headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
    resp = httpx.post(live.http_address + "/mcp", json=INIT, headers=headers, timeout=30)
    assert resp.status_code == status
    assert says in resp.json()["error"]
    if status == 401:
        assert resp.headers["www-authenticate"].startswith("Bearer")


def test_the_sdk_client_is_refused_without_a_token(live: Receiver) -> None:
    async def session() -> None:
        async with http_client(live, None) as client:
            await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK raises its own transport error for a 401
        run(session)


def test_reader_reads_and_cannot_review(live: Receiver) -> None:
    async def session() -> dict:
        async with http_client(live, "mcp-reader") as client:
            return {
                "runs": data_of(await client.call_tool("search_runs", {"limit": 1})),
                "run": data_of(await client.call_tool("get_run", {"run_id": FAILED_RUN, "tree_budget": 10})),
                "sql": data_of(await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM runs"})),
                "review": await client.call_tool("approve", {"kind": "claim", "target_id": CLAIM}),
            }

    out = run(session)
    assert out["runs"]["data"][0]["run_id"] == FAILED_RUN
    assert out["run"]["data"]["errors"][0]["tool_name"] == "fetch"
    assert out["sql"]["data"]["rows"] == [[2]]
    assert out["review"].is_error
    assert "lacks the 'review' role" in text_of(out["review"])


def test_reviewer_approves_a_claim_through_the_writer(live: Receiver) -> None:
    async def session() -> dict:
        async with http_client(live, "mcp-reviewer") as client:
            stored = data_of(
                await client.call_tool("annotate", {"kind": "claim", "target_id": CLAIM, "reason": "checked by MCP"})
            )
            lineage = data_of(await client.call_tool("claim_lineage", {"claim_id": CLAIM}))
            unknown = await client.call_tool("approve", {"kind": "claim", "target_id": "claim_nope"})
            return {"stored": stored, "lineage": lineage, "unknown": unknown}

    out = run(session)
    stored = out["stored"]["data"]
    assert stored["decision"] == "annotate"
    assert stored["principal"] == "editor"
    assert stored["reviewer"] == "editor"
    assert stored["reason"] == "checked by MCP"
    reviews = out["lineage"]["data"]["reviews"]
    assert [(r["decision"], r["principal"]) for r in reviews] == [("annotate", "editor")]
    assert out["unknown"].is_error
    assert "no claim" in text_of(out["unknown"])
    with store_cursor(live.con) as cur:
        rows = cur.execute("SELECT decision, principal FROM reviews WHERE target_id = ?", [CLAIM]).fetchall()
    assert rows == [("annotate", "editor")]


def test_stdio_through_the_receiver_api(live: Receiver) -> None:
    """``otel-agent mcp --receiver URL --token T``: the receiver's query and review APIs, its roles."""
    from tests.mcp.conftest import stdio

    async def session() -> dict:
        params = stdio("--receiver", live.http_address, "--token", "mcp-reader")
        async with Client(params) as client:
            return {
                "run": data_of(await client.call_tool("get_run", {"run_id": FAILED_RUN})),
                "review": await client.call_tool("reject", {"kind": "claim", "target_id": CLAIM}),
            }

    out = run(session)
    assert out["run"]["data"]["summary"]["cost"] == "$0.004500 (+1 unpriced call)"
    assert out["review"].is_error
    assert "review" in text_of(out["review"])
