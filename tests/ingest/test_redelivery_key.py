"""The re-delivery key of logs and metric points is (time, content hash), not time: a new record that shares its
timestamp with a stored one is stored beside it, over both transports, whether the writer's duplicate check is
answered by the recent window (a time near now) or by the store (an old time), and whether the new record comes
alone, beside a re-delivered copy of the stored one, or twice in its own request.

(test_idempotence.py only re-sends identical records, which a key of time alone also passes: issue 37.)"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from otel_agent.server.receiver import Receiver
from otel_agent.signals import SIGNALS
from tests.conftest import rows, start_receiver

OLD_NS = 1_700_000_000_000_000_000
"""2023: outside the writer's recent window, so the store answers whether a key is stored."""


def request(signal: str, when: int, contents: list[str]) -> bytes:
    """One request of ``signal`` whose records (log bodies / metric names and values) all have time ``when``."""
    if signal == "logs":
        logs = ExportLogsServiceRequest()
        scope = logs.resource_logs.add().scope_logs.add()
        for body in contents:
            rec = scope.log_records.add()
            rec.time_unix_nano = when
            rec.body.string_value = body
        return logs.SerializeToString()
    metrics = ExportMetricsServiceRequest()
    scope_metrics = metrics.resource_metrics.add().scope_metrics.add()
    for name in contents:
        metric = scope_metrics.metrics.add()
        metric.name = "calls"
        point = metric.gauge.data_points.add()
        point.time_unix_nano = when
        point.as_int = len(name)
        point.attributes.add(key="tag").value.string_value = name
    return metrics.SerializeToString()


def send(receiver, transport: str, signal: str, body: bytes) -> None:
    spec = SIGNALS[signal]
    if transport == "http":
        resp = requests.post(
            receiver.http_address + spec.http_path,
            data=body,
            headers={"Content-Type": "application/x-protobuf"},
            timeout=30,
        )
        assert resp.status_code == 200, resp.text
        assert spec.response_class.FromString(resp.content) == spec.response_class()
        return
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        export = channel.unary_unary(
            f"/{spec.grpc_service}/Export",
            request_serializer=None,
            response_deserializer=spec.response_class.FromString,
        )
        assert export(body, timeout=30) == spec.response_class()


def stored(receiver, signal: str, t: int) -> list[tuple]:
    """The stored records of time ``t`` as (time in ns, what tells them apart), sorted."""
    if signal == "logs":
        sql = "SELECT epoch_ns(time), body FROM logs WHERE epoch_ns(time) = ? ORDER BY 2"
    else:
        sql = "SELECT epoch_ns(time), attributes->>'$.tag' FROM metric_points WHERE epoch_ns(time) = ? ORDER BY 2"
    return [(at, str(v).strip('"')) for at, v in rows(receiver, sql, [t])]


_old = itertools.count(OLD_NS, 1_000)


def at(when: str) -> int:
    """A timestamp no other test of the module uses (they share one receiver)."""
    return time.time_ns() if when == "recent" else next(_old)


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    started = start_receiver(Path(tmp_path_factory.mktemp("redelivery")) / "store.duckdb")
    yield started
    started.stop()


SIGNAL_TRANSPORT_WHEN = [
    pytest.param(signal, transport, when, id=f"{signal}-{transport}-{when}")
    for signal in ("logs", "metrics")
    for transport in ("grpc", "http")
    for when in ("recent", "old")
]


@pytest.mark.parametrize(("signal", "transport", "when"), SIGNAL_TRANSPORT_WHEN)
def test_a_new_record_beside_a_redelivered_one_at_the_same_time_is_stored(receiver, signal, transport, when):
    """Stored: A. Then one request with A again (a re-delivery) and B, new, at A's timestamp: A once, B once."""
    t = at(when)
    send(receiver, transport, signal, request(signal, t, ["a"]))
    assert stored(receiver, signal, t) == [(t, "a")]
    send(receiver, transport, signal, request(signal, t, ["a", "b"]))
    assert stored(receiver, signal, t) == [(t, "a"), (t, "b")]
    # and the whole of it again changes nothing
    send(receiver, transport, signal, request(signal, t, ["b", "a"]))
    assert stored(receiver, signal, t) == [(t, "a"), (t, "b")]


@pytest.mark.parametrize(("signal", "transport", "when"), SIGNAL_TRANSPORT_WHEN)
def test_a_new_record_alone_at_a_stored_timestamp_is_stored(receiver, signal, transport, when):
    t = at(when)
    send(receiver, transport, signal, request(signal, t, ["a"]))
    send(receiver, transport, signal, request(signal, t, ["b"]))
    assert stored(receiver, signal, t) == [(t, "a"), (t, "b")]


@pytest.mark.parametrize(("signal", "transport", "when"), SIGNAL_TRANSPORT_WHEN)
def test_records_repeated_in_one_request_keep_each_content_once(receiver, signal, transport, when):
    """A request repeating a record takes the re-delivery path (one copy of each key): the other records at the
    same timestamp are each kept, not folded into the first."""
    t = at(when)
    send(receiver, transport, signal, request(signal, t, ["a", "a", "b", "c"]))
    assert stored(receiver, signal, t) == [(t, "a"), (t, "b"), (t, "c")]
