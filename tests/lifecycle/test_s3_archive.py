"""The archive on an S3-compatible server (moto in server mode, on loopback): written by a live receiver through
pyarrow's S3 filesystem with an endpoint override, read as live ∪ archive by the receiver's own query API and
console, then by ``open_with_archive`` after it stopped."""

from __future__ import annotations

import time
from collections.abc import Iterator

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

from otel_agent.lifecycle.reading import open_with_archive
from tests.conftest import free_port
from tests.lifecycle.support import healthz, hours_ago, query_api, send, spans_at


@pytest.fixture
def s3_endpoint(monkeypatch) -> Iterator[str]:
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=f"http://{endpoint}", region_name="us-east-1").create_bucket(Bucket="lake")
    yield endpoint
    server.stop()


def test_archive_to_s3_and_read_back(make_receiver, s3_endpoint) -> None:
    uri = f"s3://lake/otel?endpoint_override={s3_endpoint}&scheme=http&region=us-east-1"
    r = make_receiver(retention="1h", archive=uri)
    t = hours_ago(3)
    call = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o"}
    sent = spans_at(t, 400, "s3-", call)  # each a model call of its own trace: a run
    send(r.grpc_address, sent + spans_at(hours_ago(0.1), 10, "recent", call))
    deadline = time.monotonic() + 60
    while (report := healthz(r.http_address)["lifecycle"])["rows_deleted"].get("spans", 0) < 400:
        assert time.monotonic() < deadline, report
        time.sleep(0.1)
    # the receiver's readers: live ∪ its S3 archive (Arrow datasets registered on every reading cursor)
    assert query_api(r, "SELECT count(*), count(*) FILTER (WHERE name LIKE 's3-%') FROM spans") == [[410, 400]]
    assert query_api(r, "SELECT count(*) FROM otel_agent.main.spans") == [[10]]  # the live store alone
    by_name = "SELECT runs.run_id FROM runs JOIN spans USING (trace_id) WHERE spans.name = 's3-7'"
    (run_id,) = query_api(r, by_name)[0]
    page = requests.get(f"{r.http_address}/runs/{run_id}", timeout=30)
    assert page.status_code == 200, page.text[:500]
    assert "s3-7" in page.text
    db = r.config.db
    r.stop()
    client = boto3.client("s3", endpoint_url=f"http://{s3_endpoint}", region_name="us-east-1")
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="lake", Prefix="otel/")["Contents"]]
    span_keys = [k for k in keys if k.startswith("otel/signal=spans/") and k.endswith(".parquet")]
    assert len(span_keys) == 1
    assert span_keys[0].startswith(f"otel/signal=spans/date={t:%Y-%m-%d}/hour={t:%H}/")
    assert not [k for k in keys if k.endswith(".tmp")]
    con = open_with_archive([db], uri)
    got = con.execute("SELECT count(*), count(*) FILTER (WHERE name LIKE 's3-%') FROM spans").fetchall()
    assert got == [(410, 400)]
    # a derived view answers over the archived spans too (generated spans are unclassified 'other' spans)
    assert con.execute("SELECT count(*) FROM classified_spans WHERE span_name LIKE 's3-%'").fetchall() == [(400,)]
