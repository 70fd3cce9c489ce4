"""OTLP/JSON over HTTP: the spec's encoding rules, answered in JSON."""

from __future__ import annotations

import base64
import gzip
import json

import requests

from tests.conftest import rows

TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "eee19b7ec3c1b173"


def spec_payload() -> dict:
    """Shaped like the example in the OTLP specification, plus every AnyValue type and edge case."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "json-agent"}}],
                    "droppedAttributesCount": 1,
                },
                "schemaUrl": "https://opentelemetry.io/schemas/1.26.0",
                "scopeSpans": [
                    {
                        "scope": {"name": "json.scope", "version": "2.0.0"},
                        "spans": [
                            {
                                "traceId": TRACE,
                                "spanId": SPAN,
                                "parentSpanId": PARENT,
                                "name": "chat gpt-4o",
                                "startTimeUnixNano": "1544712660000000000",
                                "endTimeUnixNano": 1544712661000000000,
                                "kind": 3,
                                "flags": 257,
                                "attributes": [
                                    {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "9007199254740993"}},
                                    {"key": "as.number", "value": {"intValue": 42}},
                                    {"key": "ratio", "value": {"doubleValue": 0.5}},
                                    {"key": "nan", "value": {"doubleValue": "NaN"}},
                                    {"key": "inf", "value": {"doubleValue": "-Infinity"}},
                                    {"key": "ok", "value": {"boolValue": True}},
                                    {"key": "blob", "value": {"bytesValue": base64.b64encode(b"\x00\xff").decode()}},
                                    {
                                        "key": "list",
                                        "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}},
                                    },
                                    {
                                        "key": "kv",
                                        "value": {
                                            "kvlistValue": {"values": [{"key": "x", "value": {"doubleValue": 1.0}}]}
                                        },
                                    },
                                ],
                                "events": [
                                    {
                                        "timeUnixNano": "1544712660500000000",
                                        "name": "retry",
                                        "attributes": [{"key": "attempt", "value": {"intValue": "2"}}],
                                    }
                                ],
                                "links": [
                                    {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331"}
                                ],
                                "status": {"code": 2, "message": "boom"},
                                "someFutureField": {"ignored": True},
                            }
                        ],
                    }
                ],
            }
        ]
    }


def post(receiver, path: str, body: bytes, content_type: str = "application/json", **headers: str):
    return requests.post(
        receiver.http_address + path, data=body, headers={"Content-Type": content_type, **headers}, timeout=30
    )


def test_spec_shaped_json_is_stored_with_types(receiver):
    resp = post(receiver, "/v1/traces", json.dumps(spec_payload()).encode())
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.json() == {}
    (row,) = rows(
        receiver,
        "SELECT trace_id, span_id, parent_span_id, kind, flags, status_code, status_message, start_time, "
        "duration_ns, attributes, resource_dropped_attributes_count, resource_schema_url, scope_name FROM spans",
    )
    assert row[:7] == (TRACE, SPAN, PARENT, "CLIENT", 257, "ERROR", "boom")
    assert str(row[7]) == "2018-12-13 14:51:00"
    assert row[8] == 1_000_000_000
    attrs = json.loads(row[9])
    assert attrs["gen_ai.usage.input_tokens"] == 9007199254740993  # beyond 2^53: exact
    assert attrs["as.number"] == 42
    assert attrs["ratio"] == 0.5
    assert attrs["ok"] is True
    assert attrs["nan"] == {"doubleValue": "NaN"}
    assert attrs["inf"] == {"doubleValue": "-Infinity"}
    assert base64.b64decode(attrs["blob"]["bytesValue"]) == b"\x00\xff"
    assert attrs["list"] == ["a", 2]
    assert attrs["kv"] == {"x": 1.0}
    assert row[10:] == (1, "https://opentelemetry.io/schemas/1.26.0", "json.scope")
    assert rows(receiver, "SELECT name, (attributes->>'attempt')::INT FROM span_events") == [("retry", 2)]
    assert rows(receiver, "SELECT linked_trace_id, linked_span_id FROM span_links") == [
        ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    ]


def test_gzip_request_gets_gzip_response(receiver):
    body = gzip.compress(json.dumps(spec_payload()).encode())
    resp = post(receiver, "/v1/traces", body, **{"Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
    assert resp.status_code == 200
    assert resp.headers.get("content-encoding") == "gzip"
    assert resp.json() == {}  # requests inflated it
    assert rows(receiver, "SELECT count(*) FROM spans") == [(1,)]


def test_json_logs_and_metrics(receiver):
    logs = {
        "resourceLogs": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "j"}}]},
                "scopeLogs": [
                    {
                        "scope": {"name": "s"},
                        "logRecords": [
                            {
                                "timeUnixNano": "1544712660300000000",
                                "observedTimeUnixNano": "1544712660300000001",
                                "severityNumber": 10,
                                "severityText": "Information",
                                "traceId": TRACE,
                                "spanId": SPAN,
                                "eventName": "gen_ai.evaluation.result",
                                "body": {"kvlistValue": {"values": [{"key": "score", "value": {"doubleValue": 0.9}}]}},
                                "attributes": [{"key": "gen_ai.evaluation.name", "value": {"stringValue": "rel"}}],
                            }
                        ],
                    }
                ],
            }
        ]
    }
    assert post(receiver, "/v1/logs", json.dumps(logs).encode()).status_code == 200
    assert rows(receiver, "SELECT trace_id, span_id, severity_number, event_name, body->>'score' FROM logs") == [
        (TRACE, SPAN, 10, "gen_ai.evaluation.result", "0.9")
    ]
    metrics = {
        "resourceMetrics": [
            {
                "resource": {},
                "scopeMetrics": [
                    {
                        "metrics": [
                            {
                                "name": "gen_ai.client.token.usage",
                                "unit": "{token}",
                                "sum": {
                                    "aggregationTemporality": 1,
                                    "isMonotonic": True,
                                    "dataPoints": [
                                        {"asInt": "77", "timeUnixNano": "1544712660300000000", "attributes": []}
                                    ],
                                },
                            },
                            {
                                "name": "lat",
                                "histogram": {
                                    "aggregationTemporality": 2,
                                    "dataPoints": [
                                        {
                                            "timeUnixNano": "1544712660300000000",
                                            "count": "3",
                                            "sum": 1.5,
                                            "bucketCounts": ["1", "2"],
                                            "explicitBounds": [1.0],
                                            "exemplars": [{"asDouble": 0.2, "traceId": TRACE, "spanId": SPAN}],
                                        }
                                    ],
                                },
                            },
                        ]
                    }
                ],
            }
        ]
    }
    assert post(receiver, "/v1/metrics", json.dumps(metrics).encode()).status_code == 200
    got = rows(
        receiver,
        "SELECT metric_name, temporality, value_int, count, bucket_counts, explicit_bounds, "
        "exemplars->0->>'trace_id' FROM metric_points ORDER BY metric_name",
    )
    assert got == [
        ("gen_ai.client.token.usage", "DELTA", 77, None, None, None, None),
        ("lat", "CUMULATIVE", None, 3, [1, 2], [1.0], TRACE),
    ]
