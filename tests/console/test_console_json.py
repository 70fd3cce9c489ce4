"""Every console page also answers JSON (``<path>.json``, ``/index.json`` for ``/``, or ``Accept:
application/json``) from the same read call as its HTML: the data of the read layer, errors as JSON with the
page's status code, the same roles."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from otel_agent.read import runs
from otel_agent.read.source import CursorSource
from otel_agent.store.database import store_cursor
from tests.console.conftest import Live

AUTH = {"Authorization": "Bearer bob-query"}
RUN = "run_demo_deep_research"


def get_json(live: Live, path: str, **headers: str) -> tuple[int, Any]:
    resp = requests.get(live.url + path, headers={**AUTH, **headers}, timeout=60)
    assert resp.headers["content-type"].startswith("application/json"), (path, resp.text[:200])
    assert resp.headers["x-content-type-options"] == "nosniff"
    return resp.status_code, resp.json()


@pytest.mark.parametrize(
    ("path", "page"),
    [
        ("/index.json", "runs"), (f"/runs/{RUN}.json", "run"), ("/claims.json", "claims"),
        ("/artifacts.json", "artifacts"), ("/receipts.json", "receipts"), ("/providers.json?range=all", "providers"),
        ("/context.json", "context"), ("/memory.json", "memory"), ("/sql.json?q=SELECT%201%20AS%20one", "sql"),
    ],
)  # fmt: skip
def test_every_page_answers_json(live: Live, path: str, page: str) -> None:
    status, doc = get_json(live, path)
    assert status == 200, doc
    assert doc["page"] == page
    assert doc["data"] is not None


def test_run_json_is_the_read_layers_run(live: Live) -> None:
    status, doc = get_json(live, f"/runs/{RUN}.json")
    assert status == 200
    with store_cursor(live.receiver.con) as cur:
        expected = runs.run_detail(CursorSource(cur), RUN, 500)
    assert expected is not None
    run = doc["data"]["run"]
    assert run["run"]["run_id"] == RUN
    assert run["run"]["cost_usd"] == expected.run["cost_usd"]
    assert [s["span_id"] for s in run["spans"]] == [s["span_id"] for s in expected.spans]
    assert run["traces"] == expected.traces
    # the same answer through the Accept header, on the page's own path
    status, same = get_json(live, f"/runs/{RUN}", Accept="application/json")
    assert status == 200
    assert same["data"]["run"]["run"] == run["run"]


def test_lists_and_details_carry_their_rows(live: Live) -> None:
    _, listed = get_json(live, "/index.json")
    ids = {r["run_id"] for r in listed["data"]["runs"]}
    assert RUN in ids
    assert listed["data"]["page"]["count"] == len(listed["data"]["runs"])
    _, claims = get_json(live, "/claims.json")
    claim_id = claims["data"]["rows"][0]["claim_id"]
    _, claim = get_json(live, f"/claims/{claim_id}.json")
    assert claim["data"]["lineage"]["claim"]["claim_id"] == claim_id
    _, receipts = get_json(live, "/receipts.json")
    assert receipts["data"]["order"]
    assert all(state in receipts["data"]["groups"] for state in receipts["data"]["order"])


def test_errors_and_refusals_are_json(live: Live) -> None:
    status, doc = get_json(live, "/runs/no-such-run.json")
    assert status == 404
    assert doc["error"] == "no run 'no-such-run'"
    resp = requests.get(live.url + "/index.json", timeout=30)
    assert resp.status_code == 401
    assert resp.json()["status"] == 401
    resp = requests.get(live.url + "/index.json", headers={"Authorization": "Bearer agent-ingest"}, timeout=30)
    assert resp.status_code == 403
    status, doc = get_json(live, "/sql.json?q=DELETE%20FROM%20spans")
    assert status == 400
    assert "only read statements" in doc["error"]
