"""The signal registry is what every layer uses: each ``Signal``'s HTTP path and gRPC service take its
request, its response class parses the reply, its fold fills exactly its tables, and the rows land in its
main table."""

from __future__ import annotations

import grpc
import pytest
import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from otel_agent.fold.decode import PROTOBUF, decode_payload
from otel_agent.fold.redact import Redactor
from otel_agent.signals import SIGNALS
from tests.conftest import rows
from tests.otlp_builders import kvs, span_request

T0 = 1_700_000_000_000_000_000


def one_item(signal: str, tag: str) -> bytes:
    if signal == "traces":
        return span_request([{"name": tag}]).SerializeToString()
    if signal == "logs":
        req = ExportLogsServiceRequest()
        record = req.resource_logs.add().scope_logs.add().log_records.add()
        record.time_unix_nano = T0
        record.body.string_value = tag
        return req.SerializeToString()
    req = ExportMetricsServiceRequest()
    metric = req.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = tag
    point = metric.gauge.data_points.add()
    point.time_unix_nano = T0
    point.as_int = 1
    point.attributes.extend(kvs({"tag": tag}))
    return req.SerializeToString()


def test_the_registry_names_three_signals():
    assert list(SIGNALS) == ["traces", "logs", "metrics"]
    for name, spec in SIGNALS.items():
        assert spec.name == name
        assert spec.http_path == f"/v1/{name}"
        assert (
            spec.rejected_field
            in spec.response_class.DESCRIPTOR.fields_by_name["partial_success"].message_type.fields_by_name
        )
        assert set(spec.key) <= set(spec.tables[spec.main_table].names)


@pytest.mark.parametrize("signal", list(SIGNALS))
def test_fold_fills_the_registered_tables(signal):
    spec = SIGNALS[signal]
    batch = decode_payload(signal, PROTOBUF, one_item(signal, "folded"), Redactor(), None, 0)
    assert batch.signal == signal
    assert batch.items == 1
    registered = {**spec.tables, **{t.name: t.schema for t in spec.lookups}}
    assert set(spec.tables) <= set(batch.tables) <= set(registered)
    for name, table in batch.tables.items():
        assert table.schema.equals(registered[name]), name


@pytest.mark.parametrize("signal", list(SIGNALS))
def test_both_transports_take_each_signal_where_the_registry_says(receiver, signal):
    spec = SIGNALS[signal]
    resp = requests.post(
        receiver.http_address + spec.http_path,
        data=one_item(signal, "via-http"),
        headers={"Content-Type": "application/x-protobuf"},
        timeout=30,
    )
    assert resp.status_code == 200
    assert spec.response_class.FromString(resp.content) == spec.response_class()
    with grpc.insecure_channel(receiver.grpc_address) as channel:
        call = channel.unary_unary(
            f"/{spec.grpc_service}/Export",
            request_serializer=None,
            response_deserializer=spec.response_class.FromString,
        )
        assert call(one_item(signal, "via-grpc"), timeout=30) == spec.response_class()
    assert rows(receiver, f"SELECT count(*) FROM {spec.main_table}") == [(2,)]
