"""Issue 15 item 7: proxy requests through oi.proxy_request, read back from proxy_requests, proxy_fallbacks,
proxy_health, run_metrics' proxy_* rows and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import otel_agent.instrument as oi
from tests.seeds.support import rows, run_cli, store_of

RUN = "run_proxy"


def record() -> None:
    with oi.flow_run("coding_session", run_id=RUN), oi.step("edit", step_id="step_edit"):
        # the agent's own call, and inside it the proxy's record of the same request (two fallbacks:
        # anthropic overloaded, the first fallback's provider timed out, openai served it, streamed)
        with oi.provider_call("openai", "gpt-4o") as call:
            call.set_usage(1200, 300)
            with oi.proxy_request("claude_code", "anthropic", "claude-sonnet-4", stream=True) as req:
                req.fallback(to_provider="google", to_model="gemini-2.5-flash", reason="overloaded")
                req.fallback(to_provider="openai", to_model="gpt-4o", reason="timeout")
                for _ in range(7):
                    req.stream_chunks()
                req.stream_chunks(5)
                req.set_usage(1200, 300)
                req.set_cost(0.0075)
        # a request of another client straight to the proxy, which fails after a fallback it says failed
        with oi.proxy_request("cursor", "openai", "gpt-4o-mini") as failing:
            failing.fallback(to_provider="azure", reason="rate_limited", status="failed")
            failing.fail("TimeoutError", "upstream")
        with oi.proxy_request("cursor", "openai", "gpt-4o-mini") as ok:
            ok.set_usage(100, 10)
            ok.set_cost(0.0001)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store_of(tmp_path_factory.mktemp("proxy") / "s.duckdb", record)


def test_proxy_requests_view(db: Path) -> None:
    got = rows(
        db,
        "SELECT source, client, provider, model, stream, stream_chunks, input_tokens, output_tokens, cost_usd,"
        " fallbacks, fallback_from_provider, is_error, nested, run_id, step_id FROM proxy_requests"
        " ORDER BY start_time",
    )
    assert got == [
        {"source": "otel_agent", "client": "claude_code", "provider": "openai", "model": "gpt-4o", "stream": True,
         "stream_chunks": 12, "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0075, "fallbacks": 2,
         "fallback_from_provider": "anthropic", "is_error": False, "nested": True, "run_id": RUN,
         "step_id": "step_edit"},
        {"source": "otel_agent", "client": "cursor", "provider": "azure", "model": "gpt-4o-mini", "stream": None,
         "stream_chunks": None, "input_tokens": None, "output_tokens": None, "cost_usd": None, "fallbacks": 1,
         "fallback_from_provider": "openai", "is_error": True, "nested": False, "run_id": RUN,
         "step_id": "step_edit"},
        {"source": "otel_agent", "client": "cursor", "provider": "openai", "model": "gpt-4o-mini", "stream": None,
         "stream_chunks": None, "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.0001, "fallbacks": 0,
         "fallback_from_provider": None, "is_error": False, "nested": False, "run_id": RUN,
         "step_id": "step_edit"},
    ]  # fmt: skip
    # a proxy request is a provider call, counted once: the nested one fills nothing the agent's call lacks
    calls = rows(db, "SELECT provider, request_model, input_tokens FROM provider_calls ORDER BY start_time")
    assert [c["provider"] for c in calls] == ["openai", "azure", "openai"]


def test_fallback_status_recorded_or_derived(db: Path) -> None:
    got = rows(
        db,
        "SELECT client, attempt, from_provider, to_provider, to_model, reason, status, status_derived"
        " FROM proxy_fallbacks ORDER BY time",
    )
    assert got == [
        {"client": "claude_code", "attempt": 1, "from_provider": "anthropic", "to_provider": "google",
         "to_model": "gemini-2.5-flash", "reason": "overloaded", "status": "failed", "status_derived": True},
        {"client": "claude_code", "attempt": 2, "from_provider": "google", "to_provider": "openai",
         "to_model": "gpt-4o", "reason": "timeout", "status": "succeeded", "status_derived": True},
        {"client": "cursor", "attempt": 1, "from_provider": "openai", "to_provider": "azure",
         "to_model": "gpt-4o-mini", "reason": "rate_limited", "status": "failed", "status_derived": False},
    ]  # fmt: skip


def test_run_metrics_carry_the_seed_proxy_metrics(db: Path) -> None:
    got = {
        (r["metric"], r["labels"]): (r["value"], r["unit"])
        for r in rows(db, "SELECT * FROM run_metrics_for_run(?) WHERE metric LIKE 'proxy%'", [RUN])
    }
    claude = json.dumps({"client": "claude_code", "provider": "openai", "model": "gpt-4o"}, separators=(",", ":"))
    cursor_ok = json.dumps({"client": "cursor", "provider": "openai", "model": "gpt-4o-mini"}, separators=(",", ":"))
    assert got[("proxy_tokens_input", claude)] == (1200.0, "{token}")
    assert got[("proxy_tokens_output", claude)] == (300.0, "{token}")
    assert got[("proxy_cost_usd", claude)] == (0.0075, "USD")
    assert got[("proxy_stream_chunks", claude)] == (12.0, "{count}")
    assert got[("proxy_requests", cursor_ok)] == (1.0, "{count}")
    assert got[("proxy_request_duration_ms", cursor_ok)][1] == "ms"
    fallbacks = {json.loads(labels)["to_provider"]: (json.loads(labels), v) for (m, labels), (v, _) in got.items()
                 if m == "proxy_fallback_count"}  # fmt: skip
    assert fallbacks == {
        "google": ({"from_provider": "anthropic", "to_provider": "google", "status": "failed"}, 1.0),
        "openai": ({"from_provider": "google", "to_provider": "openai", "status": "succeeded"}, 1.0),
        "azure": ({"from_provider": "openai", "to_provider": "azure", "status": "failed"}, 1.0),
    }
    # the view over all runs says the same as the run's macro
    assert rows(db, "SELECT count(*) AS n FROM run_metrics WHERE metric LIKE 'proxy%'")[0]["n"] == len(got)


def test_proxy_health_groups_by_client_provider_model(db: Path) -> None:
    got = rows(
        db,
        "SELECT client, provider, model, requests, errors, streamed, stream_chunks, fallbacks_out, fallbacks_in,"
        " fallbacks_failed, input_tokens FROM proxy_health ORDER BY client, provider, model",
    )
    assert got == [
        {"client": "claude_code", "provider": "anthropic", "model": "claude-sonnet-4", "requests": 0, "errors": 0,
         "streamed": 0, "stream_chunks": 0, "fallbacks_out": 1, "fallbacks_in": 0, "fallbacks_failed": 0,
         "input_tokens": None},
        {"client": "claude_code", "provider": "google", "model": "gemini-2.5-flash", "requests": 0, "errors": 0,
         "streamed": 0, "stream_chunks": 0, "fallbacks_out": 1, "fallbacks_in": 1, "fallbacks_failed": 1,
         "input_tokens": None},
        {"client": "claude_code", "provider": "openai", "model": "gpt-4o", "requests": 1, "errors": 0,
         "streamed": 1, "stream_chunks": 12, "fallbacks_out": 0, "fallbacks_in": 1, "fallbacks_failed": 0,
         "input_tokens": 1200},
        {"client": "cursor", "provider": "azure", "model": "gpt-4o-mini", "requests": 1, "errors": 1,
         "streamed": 0, "stream_chunks": 0, "fallbacks_out": 0, "fallbacks_in": 1, "fallbacks_failed": 1,
         "input_tokens": None},
        {"client": "cursor", "provider": "openai", "model": "gpt-4o-mini", "requests": 1, "errors": 0,
         "streamed": 0, "stream_chunks": 0, "fallbacks_out": 1, "fallbacks_in": 0, "fallbacks_failed": 0,
         "input_tokens": 100},
    ]  # fmt: skip
    window = rows(db, "SELECT count(*) AS n FROM proxy_health_between(TIMESTAMP '2000-01-01', TIMESTAMP '2000-01-02')")
    assert window == [{"n": 0}]


def test_cli_reads_the_proxy_views(db: Path) -> None:
    out = run_cli(db, "sql", "SELECT client, provider, requests FROM proxy_health WHERE requests > 0 ORDER BY 1, 2",
                  "--format", "csv")  # fmt: skip
    assert out.splitlines() == [
        "client,provider,requests",
        "claude_code,openai,1",
        "cursor,azure,1",
        "cursor,openai,1",
    ]
    metrics = run_cli(db, "metrics", RUN, "--format", "csv").splitlines()
    assert (
        'proxy_fallback_count,1,{count},"{""from_provider"":""anthropic"",""to_provider"":""google"",'
        '""status"":""failed""}"' in metrics
    )
    assert (
        'proxy_stream_chunks,12,{count},"{""client"":""claude_code"",""provider"":""openai"",'
        '""model"":""gpt-4o""}"' in metrics
    )
