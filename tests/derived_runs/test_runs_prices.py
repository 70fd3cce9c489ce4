"""The price table: shipped data, the OTEL_AGENT_PRICES override, model-name matching, and the cost rules."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from otel_agent.errors import ConfigError
from otel_agent.store.database import open_store
from otel_agent.store.prices import PRICES_ENV, price_rows, shipped_prices_text
from tests.derived_runs.runs_support import query, write_store
from tests.derived_runs.scenario import RUN_ID, demo_spans


def test_shipped_prices_are_complete_and_dated() -> None:
    rows = price_rows()
    assert len(rows) >= 30
    for row in rows:
        assert row["origin"] == "shipped"
        assert row["source"]
        assert row["source_date"] is not None
        assert row["input_usd_per_mtok"] is not None
        assert row["output_usd_per_mtok"] is not None
    keys = [(r["provider"], r["model_pattern"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert shipped_prices_text().splitlines()[0].startswith("provider,model_pattern,")


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-0613", "gpt-4"),
        ("GPT-4o", "gpt-4o"),
        ("openai/gpt-4o", "gpt-4o"),
        ("models/gemini-2.0-flash", "gemini-2.0-flash"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet@20241022", "claude-3-5-sonnet"),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"),
        ("o1-2024-12-17", "o1"),
        ("gpt-4.1-nano", "gpt-4.1-nano"),
        ("text-embedding-3-small", "text-embedding-3-small"),
        ("mistral-large-2407", "mistral-large"),
    ],
)
def test_model_key(model: str, key: str) -> None:
    con = duckdb.connect()
    try:
        from otel_agent.store.statements import statement

        con.execute(statement("views/runs/functions")).fetchall()
        assert con.execute("SELECT oa_model_key(?)", [model]).fetchall()[0][0] == key
    finally:
        con.close()


def test_user_prices_override_and_extend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(
        "provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok\n"
        "openai,gpt-4o,1.00,2.00\n"  # overrides the shipped gpt-4o price
        "*,house-model-*,10,20\n"  # a GLOB over any provider
    )
    monkeypatch.setenv(PRICES_ENV, str(prices))
    path = write_store(tmp_path / "s.duckdb", demo_spans(with_failing=False))
    calls = query(
        path,
        "SELECT request_model, round(cost_usd, 12) AS cost, cost_source, price_model_pattern, price_source "
        "FROM provider_calls WHERE request_model IN ('gpt-4o', 'house-model-7') ORDER BY request_model",
    )
    assert [tuple(r.values()) for r in calls] == [
        # 1000 input (400 cached, no cache price given: input price) and 200 output
        ("gpt-4o", round((1000 * 1.0 + 200 * 2.0) / 1e6, 12), "price_table", "gpt-4o", str(prices)),
        ("house-model-7", round((10 * 10 + 5 * 20) / 1e6, 12), "price_table", "house-model-*", str(prices)),
    ]
    origins = query(path, "SELECT origin, count(*) AS n FROM price_table GROUP BY ALL ORDER BY origin")
    assert [tuple(r.values()) for r in origins] == [("shipped", len(price_rows(None)) - 2), ("user", 2)]


def test_prices_are_reloaded_when_the_store_is_reopened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_store(tmp_path / "s.duckdb", demo_spans(with_failing=False))
    sql = "SELECT round(cost_usd, 12) AS c FROM provider_calls WHERE request_model = 'house-model-7'"
    assert query(path, sql)[0]["c"] is None
    prices = tmp_path / "p.csv"
    prices.write_text("provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok\nopenai,house-model-7,1,1\n")
    monkeypatch.setenv(PRICES_ENV, str(prices))
    open_store(path).close()
    assert query(path, sql)[0]["c"] == round(15 / 1e6, 12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("provider,model\nopenai,x\n", "lacks column"),
        ("provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok\nopenai,x,abc,1\n", "not a number"),
        ("provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok\nopenai,x,-1,1\n", "cannot be negative"),
        ("provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok\n,x,1,1\n", "are required"),
        (
            "provider,model_pattern,input_usd_per_mtok,output_usd_per_mtok,source_date\nopenai,x,1,1,yesterday\n",
            "YYYY-MM-DD",
        ),
    ],
)
def test_bad_user_price_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    prices = tmp_path / "bad.csv"
    prices.write_text(text)
    monkeypatch.setenv(PRICES_ENV, str(prices))
    with pytest.raises(ConfigError, match=message):
        open_store(tmp_path / "s.duckdb")
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "missing.csv"))
    with pytest.raises(ConfigError, match="cannot read the price file"):
        open_store(tmp_path / "s.duckdb")


def test_cost_on_the_span_wins_over_the_price_table(demo_store: Path) -> None:
    """The retrieval call reports otel_agent.cost.usd; a reported cost is used even where a price exists."""
    rows = query(
        demo_store,
        "SELECT cost_source, count(*) AS n FROM provider_calls WHERE run_id = ? GROUP BY ALL ORDER BY ALL",
        [RUN_ID],
    )
    assert [tuple(r.values()) for r in rows] == [("price_table", 2), ("span", 1), (None, 2)]


def test_run_ids_that_json_escapes(tmp_path: Path) -> None:
    """The per-run macros find their spans by a substring test on the JSON text, except for ids JSON escapes."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import otel_agent.instrument as oi

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    odd = ['run "quoted"/x', "run\\back", "run_ü_plain"]
    with oi.use_tracer_provider(provider):
        for run_id in odd:
            with oi.flow_run("odd", run_id=run_id), oi.step("s"), oi.provider_call("openai", "gpt-4o") as call:
                call.set_usage(10, 1)
    path = write_store(tmp_path / "odd.duckdb", exporter.get_finished_spans())
    for run_id in odd:
        run = query(path, "SELECT run_id, steps, provider_calls FROM runs_for_run(?)", [run_id])
        assert [tuple(r.values()) for r in run] == [(run_id, 1, 1)]
