"""Helpers of the lifecycle tests: OTLP spans at chosen times, sent to a real receiver over gRPC."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import urllib.request
from typing import Any

import grpc

from tests.otlp_builders import span_request

TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def ns(t: dt.datetime) -> int:
    return int(t.replace(tzinfo=dt.UTC).timestamp() * 1e9) if t.tzinfo is None else int(t.timestamp() * 1e9)


def hours_ago(h: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) - dt.timedelta(hours=h)


def spans_at(t: dt.datetime, n: int, prefix: str = "s", attributes: dict[str, Any] | None = None) -> list[dict]:
    base = ns(t)
    return [
        {"name": f"{prefix}{i}", "start": base + i * 1000, "end": base + i * 1000 + 500, "attributes": attributes or {},
         "trace_id": os.urandom(16), "span_id": os.urandom(8)}
        for i in range(n)
    ]  # fmt: skip


def send(grpc_address: str, spans: list[dict], chunk: int = 500) -> None:
    with grpc.insecure_channel(grpc_address) as channel:
        call = channel.unary_unary(TRACE_EXPORT, request_serializer=None, response_deserializer=None)
        for i in range(0, len(spans), chunk):
            call(span_request(spans[i : i + chunk]).SerializeToString(), timeout=30)


def healthz(http_address: str) -> dict[str, Any]:
    return json.loads(urllib.request.urlopen(http_address + "/healthz", timeout=5).read())


def query_api(r: Any, sql: str) -> list[list]:
    """Rows of ``sql`` through the receiver's /v1/query (what ``otel-agent sql --receiver`` sends)."""
    req = urllib.request.Request(
        r.http_address + "/v1/query", json.dumps({"sql": sql}).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return [row["values"] for row in json.loads(resp.read())["rows"]]


def archive_three_days(make_receiver: Any, archive: str, **settings: Any) -> list[dict]:
    """Spans of three days (60 h, 30 h and 3 h ago) with a model and token attributes, archived and deleted by a
    real receiver's retention into ``archive`` (``settings``: more receiver settings, e.g. ``iceberg_catalog``);
    the spans sent. What the engine recipes of docs/archive.md read."""
    sent = []
    for hours, n, prefix in ((60, 300, "a"), (30, 200, "b"), (3, 150, "c")):  # > 24 h apart: 3 days
        spans = spans_at(hours_ago(hours), n, prefix)
        for i, span in enumerate(spans):
            span["attributes"] = {"gen_ai.request.model": f"model-{i % 3}", "gen_ai.usage.input_tokens": 10 + i}
        sent += spans
    r = make_receiver(retention="1h", archive=archive, **settings)
    send(r.grpc_address, sent)
    deadline = time.monotonic() + 120
    while (report := healthz(r.http_address)["lifecycle"])["rows_deleted"].get("spans", 0) < len(sent):
        assert time.monotonic() < deadline, report
        time.sleep(0.2)
    assert report["iceberg_appends"] >= 3
    r.stop()
    return sent
