"""The console's security over plain HTTP on the live receiver: roles (401/403), bearer headers and session
cookies, CSRF on every POST, the headers on every response, and OTLP/API paths unchanged beside it."""

from __future__ import annotations

import re
import time
from typing import Any

import requests

from tests.console.conftest import Live
from tests.otlp_builders import span_request

CLAIM = "claim_demo_v1_share"


def csrf_of(session: requests.Session, live: Live, path: str, token: str) -> str:
    """The CSRF token a page gives this session (the sign-in form has one for any browser)."""
    html = session.get(live.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=30).text
    if 'name="csrf"' not in html:
        html = session.get(live.url + "/signin", timeout=30).text
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


def review(session: requests.Session, live: Live, token: str | None, csrf: str | None) -> requests.Response:
    data = {"target_kind": "claim", "target_id": CLAIM, "decision": "annotate", "reason": "http test"}
    if csrf is not None:
        data["csrf"] = csrf
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return session.post(live.url + f"/claims/{CLAIM}/review", data=data, headers=headers, timeout=30,
                        allow_redirects=False)  # fmt: skip


def reviews_of(live: Live) -> list[tuple[str, str]]:
    return live.rows("SELECT reviewer, principal FROM reviews WHERE target_id = ? ORDER BY reviewed_at", [CLAIM])


def test_roles(live: Live) -> None:
    assert requests.get(live.url + "/", timeout=30).status_code == 401
    assert requests.get(live.url + "/", headers={"Authorization": "Bearer nope"}, timeout=30).status_code == 401
    ingest_only = requests.get(live.url + "/claims", headers={"Authorization": "Bearer agent-ingest"}, timeout=30)
    assert ingest_only.status_code == 403
    viewer = requests.get(live.url + f"/claims/{CLAIM}", headers={"Authorization": "Bearer bob-query"}, timeout=30)
    assert viewer.status_code == 200
    assert 'name="decision"' not in viewer.text
    assert "needs the <code>review</code> role" in viewer.text
    # the token lacking the review role cannot act, even with a valid CSRF token
    s = requests.Session()
    csrf = csrf_of(s, live, f"/claims/{CLAIM}", "bob-query")
    before = reviews_of(live)
    assert review(s, live, "bob-query", csrf).status_code == 403
    assert review(s, live, None, csrf).status_code == 401
    assert reviews_of(live) == before


def test_csrf_less_post_is_refused(live: Live) -> None:
    s = requests.Session()
    csrf = csrf_of(s, live, f"/claims/{CLAIM}", "alice-review")
    before = reviews_of(live)
    assert review(s, live, "alice-review", None).status_code == 403
    assert review(s, live, "alice-review", "0" * 64).status_code == 403
    fresh = requests.Session()  # a token from another browser's cookie does not match
    assert review(fresh, live, "alice-review", csrf).status_code == 403
    assert reviews_of(live) == before
    ok = review(s, live, "alice-review", csrf)
    assert ok.status_code == 303
    assert "reviewed=rev_" in ok.headers["location"]
    assert reviews_of(live) == [*before, ("alice", "alice")]


def test_session_cookie_flags_and_sign_out(live: Live) -> None:
    s = requests.Session()
    page = s.get(live.url + "/signin", timeout=30)
    assert "oa_csrf" in page.headers["set-cookie"]
    assert "HttpOnly" in page.headers["set-cookie"]
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
    bad = s.post(live.url + "/signin", data={"csrf": csrf, "token": "wrong"}, timeout=30, allow_redirects=False)
    assert bad.status_code == 401
    resp = s.post(live.url + "/signin", data={"csrf": csrf, "token": "bob-query", "next": "//evil.example/"},
                  timeout=30, allow_redirects=False)  # fmt: skip
    assert resp.status_code == 303
    assert resp.headers["location"] == "/"
    cookie = resp.headers["set-cookie"].lower()
    assert "oa_session=" in cookie
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert "bob-query" not in resp.headers["set-cookie"]  # the token is never put in the browser
    assert s.get(live.url + "/runs/run_demo_deep_research", timeout=30).status_code == 200
    assert s.post(live.url + "/signout", data={"csrf": csrf}, timeout=30, allow_redirects=False).status_code == 303
    assert s.get(live.url + "/", timeout=30).status_code == 401


def test_security_headers_everywhere(live: Live) -> None:
    auth = {"Authorization": "Bearer bob-query"}
    for path in (
        "/",
        "/static/console.css",
        "/static/console.js",
        "/signin",
        "/claims/nope",
        "/sql?q=DELETE+FROM+spans",
    ):
        resp = requests.get(live.url + path, headers=auth, timeout=30)
        csp = resp.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp, path
        assert "default-src 'none'" in csp, path
        assert "unsafe-inline" not in csp, path
        assert resp.headers.get("x-content-type-options") == "nosniff", path
    assert requests.get(live.url + "/claims/nope", headers=auth, timeout=30).status_code == 404
    # the SQL page has the query API's sandbox: only reads, no file access
    refused = requests.get(live.url + "/sql", params={"q": "DELETE FROM spans"}, headers=auth, timeout=30)
    assert refused.status_code == 400
    assert "only read statements" in refused.text
    files = requests.get(live.url + "/sql", params={"q": "SELECT * FROM read_csv('/etc/passwd')"}, headers=auth,
                         timeout=30)  # fmt: skip
    assert files.status_code == 400
    assert "root:" not in files.text
    csv = requests.get(live.url + "/sql", params={"q": "SELECT 1 AS a, 'x,y' AS b", "format": "csv"}, headers=auth,
                       timeout=30)  # fmt: skip
    assert csv.text.splitlines() == ["a,b", '1,"x,y"']


def test_otlp_and_api_paths_unchanged(live: Live) -> None:
    health = requests.get(live.url + "/healthz", timeout=30)
    assert health.status_code == 200
    assert health.json()["status"] == "ready"
    query = requests.post(live.url + "/v1/query", json={"sql": "SELECT 42 AS x"}, timeout=30,
                          headers={"Authorization": "Bearer bob-query"})  # fmt: skip
    assert query.status_code == 200
    assert query.json()["rows"][0]["values"] == [42]
    assert requests.post(live.url + "/v1/traces", data=b"", timeout=30).status_code in (401, 415)


def test_runs_page_follows_new_data(make_receiver: Any) -> None:
    """A run that arrives later is listed: at once through the maintained runs, or, while they are built, once
    the console's copy of the runs view is taken again."""
    receiver = make_receiver()
    receiver.console.console.store.snapshots["runs"].max_age_s = 0.0
    url = receiver.http_address
    first = requests.get(url + "/", timeout=30)
    assert first.status_code == 200
    assert "No runs match" in first.text
    body = span_request([{"name": "late_workflow", "attributes": {"gen_ai.operation.name": "invoke_workflow"}}])
    sent = requests.post(url + "/v1/traces", data=body.SerializeToString(), timeout=30,
                         headers={"Content-Type": "application/x-protobuf"})  # fmt: skip
    assert sent.status_code == 200
    deadline = time.monotonic() + 20
    while "late_workflow" not in requests.get(url + "/", timeout=30).text:
        assert time.monotonic() < deadline, "the runs page never listed the new run"
        time.sleep(0.2)


def test_downloads(live: Live) -> None:
    auth = {"Authorization": "Bearer bob-query"}
    report = requests.get(live.url + "/artifacts/art_demo_report/report.md?v=1", headers=auth, timeout=30)
    assert report.status_code == 200
    assert report.headers["content-type"].startswith("text/markdown")
    assert 'filename="report-v1.md"' in report.headers["content-disposition"]
    assert report.text.startswith("# Agent orchestration frameworks")
    assert "version 1 of 2" in report.text
    bundle = requests.get(live.url + "/runs/run_demo_deep_research/bundle.json", headers=auth, timeout=30).json()
    assert bundle["runId"] == "run_demo_deep_research"
    assert {c["id"] for c in bundle["claims"]} >= {"claim_demo_draft_share", "claim_demo_v2_share"}
    as_json = requests.get(live.url + "/sql", params={"q": "SELECT 1 AS a, [1, 2] AS l", "format": "json"},
                           headers=auth, timeout=30).json()  # fmt: skip
    assert as_json["rows"] == [[1, [1, 2]]]
    assert [c["name"] for c in as_json["columns"]] == ["a", "l"]


def test_oversized_form_is_refused(live: Live) -> None:
    s = requests.Session()
    csrf = csrf_of(s, live, f"/claims/{CLAIM}", "alice-review")
    before = reviews_of(live)
    big = {"csrf": csrf, "target_kind": "claim", "target_id": CLAIM, "decision": "annotate", "reason": "x" * 200_000}
    resp = s.post(live.url + f"/claims/{CLAIM}/review", data=big, headers={"Authorization": "Bearer alice-review"},
                  timeout=30, allow_redirects=False)  # fmt: skip
    assert resp.status_code == 400
    assert "larger than" in resp.text
    assert reviews_of(live) == before


def test_pages_name_the_store_file_but_never_its_path(live: Live) -> None:
    """The query API hides the store's path from query-role callers; the console's footer does too."""
    from pathlib import Path

    html = requests.get(live.url + "/", headers={"Authorization": "Bearer bob-query"}, timeout=30).text
    assert Path(live.db).name in html
    assert str(Path(live.db).parent) not in html
