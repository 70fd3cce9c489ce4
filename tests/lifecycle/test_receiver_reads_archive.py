"""A receiver with a local --archive answers its query API and console over live ∪ archive: spans archived and
deleted by its own retention are still counted, each once, by /v1/query and shown by the console. The archive
is empty when the receiver starts, so the views it reads are the ones refreshed after each archived window."""

from __future__ import annotations

import requests

from tests.conftest import rows
from tests.lifecycle.support import hours_ago, query_api, send, spans_at
from tests.lifecycle.test_archive import wait_deleted


def test_query_api_and_console_read_live_and_archive(make_receiver, tmp_path) -> None:
    r = make_receiver(retention="1h", archive=str(tmp_path / "archive"))
    call = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o"}
    # each span a model call of its own trace: a run (a trace of bookkeeping alone is none, docs/views-runs.md)
    old = spans_at(hours_ago(50), 300, "day-before", call) + spans_at(hours_ago(5), 200, "old", call)  # two days
    recent = spans_at(hours_ago(0.1), 40, "recent", call)
    send(r.grpc_address, old + recent)
    wait_deleted(r, len(old))
    assert rows(r, "SELECT count(*) FROM spans") == [(40,)]  # the live store keeps only the recent ones
    assert query_api(r, "SELECT count(*), count(DISTINCT span_id) FROM spans") == [[540, 540]]
    assert query_api(r, "SELECT count(*) FROM runs") == [[540]]  # every derived view reads the whole history
    send(r.grpc_address, old[:10])  # re-delivered after deletion: live again and archived, still counted once
    # read at once: retention deletes the re-delivered spans again once it next plans
    assert rows(r, "SELECT count(*) FROM spans", settle=False) == [(50,)]
    assert query_api(r, "SELECT count(*) FROM spans") == [[540]]
    assert query_api(r, "SELECT count(*) FROM otel_agent.main.spans") == [[50]]  # the store's own table: live only
    # The console reads the same catalog: an archived-only run's page shows it.
    by_name = "SELECT runs.run_id FROM runs JOIN spans USING (trace_id) WHERE spans.name = 'day-before7'"
    (run_id,) = query_api(r, by_name)[0]
    page = requests.get(f"{r.http_address}/runs/{run_id}", timeout=30)
    assert page.status_code == 200, page.text[:500]
    assert "day-before7" in page.text
